{{ scoring_rr_methods() }}
