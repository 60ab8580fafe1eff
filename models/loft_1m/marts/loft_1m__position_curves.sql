{{ scoring_position_curves() }}
