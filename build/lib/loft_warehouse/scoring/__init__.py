"""Scoring: LOFT's metrics (reference Python + SQL) over parsed answers (loft_warehouse.answers),
and the imports of upstream prediction files (answers and SQL)."""
