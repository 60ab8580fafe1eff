"""Answer files landed with `loft import-predictions --queries` for this size; incremental by
landed file (scoring/importer.py)."""

from loft_warehouse.dbt_boundary import models


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append", on_schema_change="append_new_columns")
    stored = str(dbt.this) if dbt.is_incremental else None
    return models.imported_queries(session, dbt.config.get("loft_size"), stored)
