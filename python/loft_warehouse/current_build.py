"""What this dbt build is: which invocation it is, and the selection `loft build` hands it at run time.

The invocation id lets a Python model tell the partitions this build rendered (their `build_id`)
from those carried from earlier builds (macros/accumulate.sql); the on-run-start hook sets it
(macros/publish.sql, `loft_build_started`), and outside a build it is None.

The selection (`RUNTIME_SETTINGS`: which datasets, systems, methods, variants, limit) is what
changes from one build to the next. Given to dbt as --vars, it is part of what dbt hashes for
partial parsing, so every change of selection made dbt read the whole project again. `loft build`
passes those keys in a JSON file named by $LOFT_RUNTIME_SETTINGS instead, read here when a model
runs; the models and the preflight hook read their settings through `settings()`.

The results table the on-run-end hook makes (macros/results.sql) goes to the file named by
$LOFT_RESULTS_FILE when `loft build` or an import's --build sets it, so that they print it last,
after dbt's own lines, with their one-line outcome; plain `dbt build` logs it where it is made.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loft_warehouse.errors import ConfigurationError

RUNTIME_SETTINGS = (
    "datasets", "systems", "methods", "prompt_variants", "limit", "batch", "thinking", "max_cost_usd", "retry_errors",
    "litm_documents", "litm_positions", "kv_positions", "rr_lengths", "rr_step", "reprompt_every", "icr_pages",
    "chunk_tokens", "verify_candidates",
)  # fmt: skip
RUNTIME_FILE_ENV = "LOFT_RUNTIME_SETTINGS"
RESULTS_FILE_ENV = "LOFT_RESULTS_FILE"
# Set by `loft build` and an import's --build for the dbt they run: its settings are checked.
SETTINGS_CHECKED_ENV = "LOFT_SETTINGS_CHECKED"
_CURRENT: dict[str, str] = {}


def started(invocation_id: str, _unused: str) -> str:
    """The hook's SQL function (two text arguments, as every hook's): remember this build's
    invocation id; '' back (nothing to say)."""
    _CURRENT["build_id"] = invocation_id
    return ""


def hold_results(table: str, _unused: str) -> str:
    """The hook's SQL function: the results table written to $LOFT_RESULTS_FILE ('' back), or,
    without one, given back for dbt to log."""
    path = os.environ.get(RESULTS_FILE_ENV, "").strip()
    if not path:
        return table
    Path(path).write_text(table + "\n", encoding="utf-8")
    return ""


def held_results(path: Path) -> str:
    """What the build's hook left in the results file ('' when it wrote none: a failed build)."""
    return path.read_text(encoding="utf-8") if path.exists() else ""


def build_id() -> str | None:
    """This build's invocation id, or None outside a dbt build."""
    return _CURRENT.get("build_id")


def runtime_settings() -> dict[str, Any]:
    """The selection `loft build` passed at run time ({} when dbt was started without it)."""
    value = os.environ.get(RUNTIME_FILE_ENV, "").strip()
    if not value:
        return {}
    try:
        given = json.loads(Path(value).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"{RUNTIME_FILE_ENV}={value}: cannot read the build's settings ({exc})") from exc
    if not isinstance(given, dict) or set(given) - set(RUNTIME_SETTINGS):
        raise ConfigurationError(f"{RUNTIME_FILE_ENV}={value}: expected a mapping of {', '.join(RUNTIME_SETTINGS)}")
    return given


def settings(loft: Mapping[str, Any] | None) -> dict[str, Any]:
    """A model's `loft` settings (dbt_project.yml, rendered at parse time) with this build's
    run-time selection over them."""
    return {**(loft or {}), **runtime_settings()}
