{{ scoring_rr_positions() }}
