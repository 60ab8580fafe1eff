{{ scoring_stage_metrics() }}
