{{ scoring_predictions_view() }}
