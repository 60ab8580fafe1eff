from loft_warehouse.staging import frame_for_model


def model(dbt, session):
    dbt.config(materialized="table")
    # Built from the same landing as stg_datasets: when that fails, dbt skips this model
    # instead of failing it again with the same message.
    dbt.ref("loft_128k__stg_datasets")
    return frame_for_model(dbt.config.get("loft"), dbt.config.get("loft_size"), "documents")
