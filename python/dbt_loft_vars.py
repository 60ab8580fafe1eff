"""dbt's plugin hook for the warehouse: dbt imports each top-level dbt_* module and sets up the
classes in its `plugins` after reading --vars, before anything walks them (see
loft_warehouse.dbt_boundary.vars_guard)."""

from loft_warehouse.dbt_boundary.vars_guard import VarsGuard

plugins = [VarsGuard]
