{{ method_stage_answers(1) }}
