{{ scoring_rr_costs() }}
