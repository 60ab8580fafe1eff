from loft_warehouse import current_build
from loft_warehouse.sql.gold import gold_frame


def model(dbt, session):
    dbt.config(materialized="table")
    config = current_build.settings(dbt.config.get("loft")) or {}
    return gold_frame(config.get("data_dir"), config.get("datasets"))
