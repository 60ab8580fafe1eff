{{ scoring_scores() }}
