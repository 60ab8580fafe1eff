{{ loft_prompts() }}
