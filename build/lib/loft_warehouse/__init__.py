"""LOFT as a warehouse: corpus construction, prompts, model calls and scoring for dbt-duckdb."""
