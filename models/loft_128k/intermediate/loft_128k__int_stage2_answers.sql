{{ method_stage_answers(2, ref('loft_128k__int_stage2_responses'), ref('loft_128k__int_stage2_prompts')) }}
