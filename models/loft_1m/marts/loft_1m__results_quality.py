from loft_warehouse.quality import run_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    dbt.ref("loft_1m__responses")
    dbt.ref("loft_1m__prompts")
    dbt.ref("loft_1m__predictions")
    dbt.ref("loft_1m__scores")
    dbt.ref("loft_1m__metrics")
    return run_for_model(dbt, session, "results")
