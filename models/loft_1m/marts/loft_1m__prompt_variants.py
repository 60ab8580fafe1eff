from loft_warehouse.prompts.store import table_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    dbt.config.get("loft")
    dbt.config.get("prompt_variants")
    return table_for_model(
        dbt,
        "variants",
        corpus=dbt.ref("loft_1m__corpus"),
        queries=dbt.ref("loft_1m__queries"),
        datasets=dbt.ref("loft_1m__stg_datasets"),
    )
