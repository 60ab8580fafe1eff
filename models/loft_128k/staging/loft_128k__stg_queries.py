from loft_warehouse import current_build
from loft_warehouse.dbt_boundary import models


def model(dbt, session):
    dbt.config(materialized="table")
    # Built from the same landing as stg_datasets: when that fails, dbt skips this model
    # instead of failing it again with the same message.
    dbt.ref("loft_128k__stg_datasets")
    return models.staged_frame(current_build.settings(dbt.config.get("loft")), dbt.config.get("loft_size"), "queries")
