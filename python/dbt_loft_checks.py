"""dbt's plugin hook for the warehouse: dbt imports each top-level dbt_* module and sets up the
classes in its `plugins` once it has read --select and --vars, before it parses the project
(see loft_warehouse.dbt_boundary.startup)."""

from loft_warehouse.dbt_boundary.startup import StartupChecks

plugins = [StartupChecks]
