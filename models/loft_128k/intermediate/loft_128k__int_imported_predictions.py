"""Prediction files landed with `loft import-predictions` for this size, checked against its
queries; incremental by landed file (scoring/importer.py)."""

from loft_warehouse.dbt_boundary import models


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append", on_schema_change="append_new_columns")
    stored = str(dbt.this) if dbt.is_incremental else None
    return models.imported_predictions(
        session, dbt.config.get("loft_size"), dbt.ref("loft_128k__int_scored_queries"), stored
    )
