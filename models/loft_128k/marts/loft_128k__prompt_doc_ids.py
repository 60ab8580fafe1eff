from loft_warehouse.prompts.store import table_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    return table_for_model(
        dbt.config.get("loft"),
        "doc_ids",
        corpus=dbt.ref("loft_128k__corpus"),
        queries=dbt.ref("loft_128k__queries"),
        datasets=dbt.ref("loft_128k__stg_datasets"),
    )
