"""Stage 3 of the three-stage methods: each system's responses to the prompts built from its own
stage-2 answers (int_stage3_prompts), sent now or read from the durable store."""

from loft_warehouse.inference.warehouse import responses


def model(dbt, session):
    dbt.config(materialized="table")
    loft = dbt.config.get("loft") or {}
    return responses(
        dbt.config.get("loft_size"),
        selection=loft.get("systems"),
        systems_file_setting=loft.get("systems_file"),
        max_cost_usd=loft.get("max_cost_usd"),
        store_setting=loft.get("response_store"),
        retry_errors=loft.get("retry_errors"),
        batch=loft.get("batch"),
        prompts=dbt.ref("loft_128k__int_stage3_prompts"),
        prefixes=None,
        doc_ids=dbt.ref("loft_128k__prompt_doc_ids"),
        corpus=dbt.ref("loft_128k__corpus"),
        queries=dbt.ref("loft_128k__queries"),
        prices=dbt.source("reference", "model_prices"),
        data_dir=loft.get("data_dir"),
        limit=loft.get("limit"),
    )
