"""Stage 1 of every method: the selected systems' responses to this size's prompts, sent now or
read from the durable store. Prints the cost estimate of every stage before any call."""

from loft_warehouse import current_build
from loft_warehouse.inference.warehouse import InferenceSettings, StageRelations, responses


def model(dbt, session):
    dbt.config(materialized="table")
    relations = StageRelations(
        prompts=dbt.ref("loft_128k__prompts"),
        doc_ids=dbt.ref("loft_128k__prompt_doc_ids"),
        corpus=dbt.ref("loft_128k__corpus"),
        queries=dbt.ref("loft_128k__queries"),
        prices=dbt.source("reference", "model_prices"),
        prefixes=dbt.ref("loft_128k__prompt_prefixes"),
        segments=dbt.ref("loft_128k__prompt_segments"),
        estimates=dbt.ref("loft_128k__cost_estimates"),
        media=dbt.ref("loft_128k__stg_mm_media"),
    )
    return responses(dbt.config.get("loft_size"), InferenceSettings.from_loft(current_build.settings(dbt.config.get("loft"))), relations)
