{{ scoring_ablations() }}
