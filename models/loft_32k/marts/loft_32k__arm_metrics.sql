{{ scoring_arm_metrics() }}
