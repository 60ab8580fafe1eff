"""Check every build setting before the first model runs, and say what is wrong in one line.

Called by the `on-run-start` hook (macros/preflight.sql) through the `loft_preflight` SQL
function the dbt plugin registers: a typo in a dataset, variant, method or system name, a bad
number, a data folder without LOFT data or a missing tokenizer stops `dbt build` in its first
seconds, once, instead of failing (with a traceback) in every model that reads the setting.
The models still check what they read; this only moves the first failure to the front.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from loft_warehouse import registry, settings
from loft_warehouse.design import Design
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference import cost
from loft_warehouse.inference.systems import parse_selection, select
from loft_warehouse.inference.warehouse import configured_systems, query_limit

SIZE_PATTERN = re.compile(r"loft_(32k|128k|1m)__")
DATA_LAYOUT = ("loft", "raw")


def selected_sizes(resources: list[str]) -> list[str]:
    """The sizes whose models a dbt selection includes (from `selected_resources`)."""
    found = {match.group(1) for resource in resources for match in SIZE_PATTERN.finditer(resource)}
    return [size for size in ("32k", "128k", "1m") if size in found]


def data_root(configured: str | None) -> Path:
    """The data folder, refused when it holds neither release-format nor raw data."""
    root = settings.data_dir(configured)
    if not any((root / part).is_dir() for part in DATA_LAYOUT):
        raise ConfigurationError(
            f"this folder holds no LOFT data: expected loft/ (release format) or raw/ (raw sources) in {root}"
        )
    return root


def check(values: dict[str, Any], sizes: list[str]) -> Path:
    """Every setting, in the order a build needs them; ConfigurationError names the first bad one."""
    root = data_root(values.get("data_dir"))
    settings.tokenizer_model(values.get("tokenizer_model"), root)
    try:
        int(str(values.get("seed", "0")))
    except ValueError as exc:
        raise ConfigurationError(f"seed must be an integer, got {values.get('seed')!r}") from exc
    Design.from_config(values, values.get("prompt_variants"))
    query_limit(values.get("limit"))
    cost.parse_limit(values.get("max_cost_usd"))
    settings.flag(values.get("retry_errors"), "retry_errors")
    select(configured_systems(values.get("systems_file"), values.get("batch")), parse_selection(values.get("systems")))
    wanted = registry.parse_selection(values.get("datasets"))
    if wanted:
        for size in sizes:
            registry.specs_for_size(root, size, wanted, quiet=True)
    return root


def preflight(values_json: str, resources_json: str) -> str:
    """The SQL function's body: '' when the settings hold, else the one line to show."""
    try:
        check(json.loads(values_json), selected_sizes(json.loads(resources_json)))
    except ConfigurationError as exc:
        return f"settings: {exc}"
    return ""
