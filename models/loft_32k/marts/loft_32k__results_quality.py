from loft_warehouse.quality import run_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    dbt.ref("loft_32k__responses")
    dbt.ref("loft_32k__prompts")
    dbt.ref("loft_32k__predictions")
    dbt.ref("loft_32k__scores")
    dbt.ref("loft_32k__metrics")
    return run_for_model(dbt, session, "results")
