{{ scoring_verification_scores() }}
