"""Arms: each run's settings as columns (python/loft_warehouse/arms.py)."""

from loft_warehouse import current_build
from loft_warehouse.arms import arms_frame
from loft_warehouse.design import Design


def model(dbt, session):
    dbt.config(materialized="table")
    loft = current_build.settings(dbt.config.get("loft"))
    design = Design.from_config(loft or {})
    return arms_frame(
        dbt.ref("loft_128k__int_prompt_rows").project("task, dataset, variant, method").distinct().pl(),
        dbt.ref("loft_128k__prompt_variants").pl(),
        design,
        dbt.config.get("loft_size"),
    )
