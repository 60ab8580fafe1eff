"""Prediction files landed with `loft import-predictions` for this size, checked against its queries."""

from loft_warehouse.scoring.importer import frame_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    return frame_for_model(dbt, dbt.ref("loft_128k__int_scored_queries"))
