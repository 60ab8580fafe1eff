"""dbt-duckdb plugin: registers the scoring functions on every connection dbt opens, and sets
its memory limit when $LOFT_DUCKDB_MEMORY_LIMIT asks for one.

Named in profiles.yml (`plugins: [{module: loft_warehouse.scoring.dbt_plugin}]`), so the SQL
scoring models can call `loft_parse_loft(...)` and friends like built-in functions, and the
`on-run-start` hook can check the settings (`loft_preflight`, preflight.py) and the `on-run-end`
hook publish a successful build (`loft_publish`, publish.py). Loading it
also arms Ctrl-C for the Python models (interrupts.py), early enough for dbt's main thread to
take that up before it starts waiting for them.
"""

from __future__ import annotations

import contextlib
from typing import Any

import duckdb
from dbt.adapters.duckdb.plugins import BasePlugin
from duckdb import DuckDBPyConnection

from loft_warehouse import interrupts, settings
from loft_warehouse.preflight import preflight
from loft_warehouse.publish import publish
from loft_warehouse.scoring.duckdb_functions import register


class Plugin(BasePlugin):
    """Adds the scoring functions when dbt configures a connection."""

    def initialize(self, plugin_config: dict[str, Any]) -> None:
        interrupts.arm()

    def configure_connection(self, conn: DuckDBPyConnection) -> None:
        settings.limit_memory(conn)
        register(conn)
        with contextlib.suppress(duckdb.InvalidInputException):
            conn.remove_function("loft_preflight")
        conn.create_function("loft_preflight", preflight, ["VARCHAR", "VARCHAR"], "VARCHAR", side_effects=True)
        with contextlib.suppress(duckdb.InvalidInputException):
            conn.remove_function("loft_publish")
        conn.create_function("loft_publish", publish, ["VARCHAR", "VARCHAR"], "VARCHAR", side_effects=True)
