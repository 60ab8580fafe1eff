"""Stage 2 of the multi-stage methods: each system's responses to the prompts built from its own
stage-1 answers (int_stage2_prompts), sent now or read from the durable store."""

from loft_warehouse import current_build
from loft_warehouse.inference.warehouse import InferenceSettings, StageRelations, responses


def model(dbt, session):
    dbt.config(materialized="table")
    relations = StageRelations(
        prompts=dbt.ref("loft_128k__int_stage2_prompts"),
        doc_ids=dbt.ref("loft_128k__prompt_doc_ids"),
        corpus=dbt.ref("loft_128k__corpus"),
        queries=dbt.ref("loft_128k__queries"),
        prices=dbt.source("reference", "model_prices"),
        scope=dbt.ref("loft_128k__prompts"),
    )
    return responses(dbt.config.get("loft_size"), InferenceSettings.from_loft(current_build.settings(dbt.config.get("loft"))), relations)
