{{ scoring_turn_scores() }}
