{{ scoring_rr_sweeps() }}
