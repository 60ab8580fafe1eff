{{ scoring_predictions() }}
