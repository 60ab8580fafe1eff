"""Scoring: parse model answers, LOFT's metrics (reference Python + SQL), and result imports.

Importing this package (or `scoring.parse`) needs neither DuckDB nor dbt, so the inference code
can parse earlier turns' answers while it builds multi-turn prompts.
"""
