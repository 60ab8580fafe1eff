"""Stage 1 of every method: the selected systems' responses to this size's prompts, sent now or
read from the durable store. Prints the cost estimate of every stage before any call."""

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
        prompts=dbt.ref("loft_128k__prompts"),
        prefixes=dbt.ref("loft_128k__prompt_prefixes"),
        segments=dbt.ref("loft_128k__prompt_segments"),
        doc_ids=dbt.ref("loft_128k__prompt_doc_ids"),
        corpus=dbt.ref("loft_128k__corpus"),
        queries=dbt.ref("loft_128k__queries"),
        prices=dbt.source("reference", "model_prices"),
        estimates=dbt.ref("loft_128k__cost_estimates"),
        data_dir=loft.get("data_dir"),
        limit=loft.get("limit"),
    )
