"""Prediction files landed with `loft import-predictions` for this size, checked against its queries."""

from loft_warehouse.dbt_boundary import models


def model(dbt, session):
    dbt.config(materialized="table")
    return models.imported_predictions(session, dbt.config.get("loft_size"), dbt.ref("loft_128k__int_scored_queries"))
