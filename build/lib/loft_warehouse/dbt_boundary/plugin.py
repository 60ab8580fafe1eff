"""dbt-duckdb plugin: registers the scoring functions on every connection dbt opens, and sets
its memory limit (settings.duckdb_memory_limit).

Named in profiles.yml (`plugins: [{module: loft_warehouse.dbt_boundary.plugin}]`), so the SQL
scoring models can call `loft_parse_loft(...)` and friends like built-in functions, and the
`on-run-start` hook can check the settings (`loft_preflight`, preflight.py) and the `on-run-end`
hook publish a successful build (`loft_publish`, publish.py). Before dbt first opens the working
file it starts from the published build if the last run did not publish (publish.py). Loading it
also arms Ctrl-C for the Python models (interrupts.py), early enough for dbt's main thread to
take that up before it starts waiting for them, and makes a Python model's data, settings, cost,
data-quality or Ctrl-C error read as its message alone: dbt-duckdb reports any exception from a Python
model with its whole traceback, which buried the one line that says which file and row.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import duckdb
from dbt.adapters.duckdb.environments import Environment
from dbt.adapters.duckdb.plugins import BasePlugin
from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError
from duckdb import DuckDBPyConnection

from loft_warehouse import current_build, interrupts, settings
from loft_warehouse.dbt_boundary.preflight import preflight
from loft_warehouse.dbt_boundary.publish import begin_build, publish, restore_unpublished
from loft_warehouse.errors import BadInputError, ConfigurationError, CostLimitError, DataQualityError, OutOfSpaceError
from loft_warehouse.scoring.duckdb_functions import register, register_sql_macros

# What the on-run-start and on-run-end hooks call: two text arguments, one line of text back.
HOOK_FUNCTIONS = {
    "loft_preflight": preflight,
    "loft_publish": publish,
    "loft_begin_build": begin_build,
    "loft_build_started": current_build.started,
    "loft_hold_results": current_build.hold_results,
}
SAID_IN_ONE_LINE = (
    BadInputError,
    ConfigurationError,
    CostLimitError,
    DataQualityError,
    OutOfSpaceError,
    interrupts.Interrupted,
)


def _report_in_one_line(run_python_job: Any) -> Any:
    """dbt-duckdb's Python model runner, with our own errors reported by their message alone."""

    def run(cls: type, *args: Any, **kwargs: Any) -> Any:
        try:
            return run_python_job(cls, *args, **kwargs)
        except DbtRuntimeError as failed:
            if isinstance(failed.__context__, SAID_IN_ONE_LINE):
                raise DbtRuntimeError(str(failed.__context__)) from None
            raise

    run.loft_one_line = True  # type: ignore[attr-defined]
    return run


class Plugin(BasePlugin):
    """Adds the scoring functions when dbt configures a connection."""

    def initialize(self, plugin_config: dict[str, Any]) -> None:
        interrupts.arm()
        if not getattr(Environment.run_python_job, "loft_one_line", False):
            original = Environment.__dict__["run_python_job"].__func__
            Environment.run_python_job = classmethod(_report_in_one_line(original))  # type: ignore[assignment]
        self._working_checked = False

    def update_connection_config(self, creds: Any, config: dict[str, Any]) -> None:
        if self._working_checked or creds.path == ":memory:":
            return
        self._working_checked = True
        line = restore_unpublished(creds.path, os.environ.get("LOFT_DUCKDB_PATH", "loft.duckdb"))
        if line:
            AdapterLogger("loft").info(line)

    def configure_cursor(self, cursor: DuckDBPyConnection) -> None:
        # SQL macros live in a connection's temp catalog, which dbt's cursors do not share.
        register_sql_macros(cursor)

    def configure_connection(self, conn: DuckDBPyConnection) -> None:
        settings.limit_memory(conn)
        register(conn)
        for name, hook in HOOK_FUNCTIONS.items():
            with contextlib.suppress(duckdb.InvalidInputException):
                conn.remove_function(name)
            conn.create_function(name, hook, ["VARCHAR", "VARCHAR"], "VARCHAR", side_effects=True)
