{{ method_stage_answers(1, ref('loft_128k__int_stage1_responses'), ref('loft_128k__prompts')) }}
