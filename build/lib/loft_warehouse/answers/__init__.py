"""What a model's text says: LOFT's answer parsing and normalisation, read alike by scoring, the
methods' later stages, multi-turn prompts, the planted system and the study sources. It needs
neither DuckDB nor dbt."""
