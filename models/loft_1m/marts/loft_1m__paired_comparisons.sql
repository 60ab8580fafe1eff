{{ scoring_paired_comparisons() }}
