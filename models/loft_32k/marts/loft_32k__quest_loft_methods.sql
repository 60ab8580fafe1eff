{{ scoring_quest_loft_methods() }}
