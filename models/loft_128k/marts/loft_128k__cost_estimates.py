"""Estimated cost of every configured system on this size's prompts, per dataset, method and
stage, before any call (later stages from the methods' settings)."""

from loft_warehouse import current_build
from loft_warehouse.design import Design
from loft_warehouse.inference.warehouse import cost_estimates


def model(dbt, session):
    dbt.config(materialized="table")
    config = current_build.settings(dbt.config.get("loft")) or {}
    return cost_estimates(
        dbt.config.get("loft_size"),
        config.get("systems_file"),
        batch=config.get("batch"),
        thinking=config.get("thinking"),
        prompts=dbt.ref("loft_128k__prompts"),
        prices=dbt.source("reference", "model_prices"),
        prefixes=dbt.ref("loft_128k__prompt_prefixes"),
        segments=dbt.ref("loft_128k__prompt_segments"),
        corpus=dbt.ref("loft_128k__corpus"),
        design=Design.from_config(config, config.get("prompt_variants")),
        data_dir=config.get("data_dir"),
        media=dbt.ref("loft_128k__stg_mm_media"),
    )
