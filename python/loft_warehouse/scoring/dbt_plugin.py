"""dbt-duckdb plugin: registers the scoring functions on every connection dbt opens.

Named in profiles.yml (`plugins: [{module: loft_warehouse.scoring.dbt_plugin}]`), so the SQL
scoring models can call `loft_parse_loft(...)` and friends like built-in functions.
"""

from __future__ import annotations

from dbt.adapters.duckdb.plugins import BasePlugin
from duckdb import DuckDBPyConnection

from loft_warehouse.scoring.duckdb_functions import register


class Plugin(BasePlugin):
    """Adds the scoring functions when dbt configures a connection."""

    def configure_connection(self, conn: DuckDBPyConnection) -> None:
        register(conn)
