from loft_warehouse.quality import run_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    dbt.ref("loft_32k__corpus")
    dbt.ref("loft_32k__queries")
    dbt.ref("loft_32k__corpus_stats")
    dbt.ref("loft_32k__stg_documents")
    return run_for_model(dbt, session, "corpus")
