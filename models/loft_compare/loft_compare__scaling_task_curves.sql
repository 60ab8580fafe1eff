{{ scoring_scaling_task_curves(ref('loft_compare__scaling_curves')) }}
