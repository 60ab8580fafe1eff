from loft_warehouse import current_build
from loft_warehouse.dbt_boundary import models


def model(dbt, session):
    dbt.config(materialized="table")
    dbt.ref("loft_128k__stg_mm_media")  # bad media fail there, once, and this model is skipped
    return models.media_table(current_build.settings(dbt.config.get("loft")), dbt.config.get("loft_size"), "prompt_parts")
