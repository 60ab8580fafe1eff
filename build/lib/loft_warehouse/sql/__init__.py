"""The SQL track: Spider/SParC databases, gold execution, prompts, scoring, sandbox."""
