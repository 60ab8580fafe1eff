"""Gold adjudications under named versions: the QUEST-LOFT appendices and the adjudication files
of the adjudications folder (python/loft_warehouse/scoring/adjudications.py)."""

from loft_warehouse import current_build
from loft_warehouse.dbt_boundary import models


def model(dbt, session):
    dbt.config(materialized="table")
    return models.gold_adjudications(current_build.settings(dbt.config.get("loft")), seed=dbt.source("reference", "quest_loft_revised_gold"))
