"""Prediction files landed with `loft import-predictions` for this size, checked against its queries."""

from loft_warehouse.scoring.importer import relation_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    return relation_for_model(session, dbt.config.get("loft_size"), dbt.ref("loft_128k__int_scored_queries"))
