{{ scoring_stage_retrieval() }}
