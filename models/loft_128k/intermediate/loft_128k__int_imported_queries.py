"""Answer files landed with `loft import-predictions --queries` for this size."""

from loft_warehouse.dbt_boundary import models


def model(dbt, session):
    dbt.config(materialized="table")
    return models.imported_queries(session, dbt.config.get("loft_size"))
