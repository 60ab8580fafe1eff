"""Stage-3 prompts: a model over stage 2's parsed answers (python/loft_warehouse/methods/stage2.py)."""

from loft_warehouse import current_build
from loft_warehouse.dbt_boundary import models


def model(dbt, session):
    dbt.config(materialized="table")
    return models.stage_prompts(
        current_build.settings(dbt.config.get("loft")),
        answers=dbt.ref("loft_128k__int_stage2_answers"),
        corpus=dbt.ref("loft_128k__corpus"),
        queries=dbt.ref("loft_128k__queries"),
        datasets=dbt.ref("loft_128k__stg_datasets"),
        doc_ids=dbt.ref("loft_128k__prompt_doc_ids"),
        stage=3,
    )
