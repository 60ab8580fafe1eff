{{ scoring_prediction_rows() }}
