{{ scoring_scored_queries() }}
