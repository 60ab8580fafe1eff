from loft_warehouse.staging import frame_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    dbt.config.get("loft")
    return frame_for_model(dbt, "documents")
