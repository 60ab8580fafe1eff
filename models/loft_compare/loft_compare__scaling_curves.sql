{{ scoring_scaling_curves(ref('loft_compare__scaling_scores')) }}
