from loft_warehouse.dbt_boundary import models


def model(dbt, session):
    dbt.config(materialized="table")
    dbt.ref("loft_128k__corpus")
    dbt.ref("loft_128k__queries")
    dbt.ref("loft_128k__corpus_stats")
    dbt.ref("loft_128k__stg_documents")
    return models.quality_results(session, dbt.this.schema, "corpus")
