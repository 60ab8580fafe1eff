{{ scoring_metrics() }}
