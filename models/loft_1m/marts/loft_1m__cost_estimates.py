"""Estimated cost of every configured system on this size's prompts, per dataset, before any call."""

from loft_warehouse.inference.warehouse import cost_estimates


def model(dbt, session):
    dbt.config(materialized="table")
    return cost_estimates(
        dbt.this.schema.replace("loft_", ""),
        dbt.config.get("systems_file"),
        prompts=dbt.ref("loft_1m__prompts"),
        prices=dbt.source("reference", "model_prices"),
        prefixes=dbt.ref("loft_1m__prompt_prefixes"),
        data_dir=(dbt.config.get("loft") or {}).get("data_dir"),
    )
