{{ method_stage_answers(2) }}
