{{ scoring_quest_loft_retrieval() }}
