{{ scoring_error_attribution() }}
