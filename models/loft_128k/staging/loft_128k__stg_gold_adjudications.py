"""Gold adjudications under named versions: the QUEST-LOFT appendices and the adjudication files
of the adjudications folder (python/loft_warehouse/scoring/adjudications.py)."""

from loft_warehouse.scoring.adjudications import table_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    return table_for_model(dbt.config.get("loft"), seed=dbt.source("reference", "quest_loft_revised_gold"))
