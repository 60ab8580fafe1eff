from loft_warehouse.staging import frame_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    return frame_for_model(dbt.config.get("loft"), dbt.config.get("loft_size"), "datasets")
