"""Answer files landed with `loft import-predictions --queries` for this size."""

from loft_warehouse.scoring.importer import queries_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    return queries_for_model(session, dbt.config.get("loft_size"))
