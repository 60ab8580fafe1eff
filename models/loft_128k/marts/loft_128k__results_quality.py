from loft_warehouse.dbt_boundary import models


def model(dbt, session):
    dbt.config(materialized="table")
    dbt.ref("loft_128k__responses")
    dbt.ref("loft_128k__prompts")
    dbt.ref("loft_128k__predictions")
    dbt.ref("loft_128k__scores")
    dbt.ref("loft_128k__metrics")
    return models.quality_results(session, dbt.this.schema, "results")
