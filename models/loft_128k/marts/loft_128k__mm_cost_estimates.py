"""Estimated cost of every configured system on this size's multimodal prompts, text and media
tokens apart, before any call."""

from loft_warehouse import current_build
from loft_warehouse.inference.warehouse import mm_cost_estimates


def model(dbt, session):
    dbt.config(materialized="table")
    config = current_build.settings(dbt.config.get("loft")) or {}
    return mm_cost_estimates(
        dbt.config.get("loft_size"),
        config.get("systems_file"),
        parts=dbt.ref("loft_128k__mm_prompt_parts"),
        media=dbt.ref("loft_128k__stg_mm_media"),
        prices=dbt.source("reference", "model_prices"),
        tokenizer_model=config.get("tokenizer_model"),
        data_dir=config.get("data_dir"),
    )
