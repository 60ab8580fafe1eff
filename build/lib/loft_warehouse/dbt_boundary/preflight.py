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

import yaml

from loft_warehouse import current_build, registry, settings
from loft_warehouse.design import Design
from loft_warehouse.errors import ConfigurationError, did_you_mean
from loft_warehouse.inference import cost
from loft_warehouse.inference.systems import parse_selection, select
from loft_warehouse.inference.warehouse import configured_systems, query_limit
from loft_warehouse.readers import settings_yaml
from loft_warehouse.settings import PROJECT_ROOT

SIZE_PATTERN = re.compile(r"loft_(32k|128k|1m)__")
VAR_NAME = re.compile(r"\bvar\('([a-z_0-9]+)'")
DATA_LAYOUT = ("loft", "raw")
NAME_LISTS = ("datasets", "methods", "prompt_variants", "systems")


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


def known_vars() -> tuple[str, ...]:
    """The --vars keys a build reads: those of dbt_project.yml's `loft` settings."""
    project = yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text(encoding="utf-8"))
    texts = project["models"]["loft"]["+loft"].values()
    return tuple(sorted({name for text in texts for name in VAR_NAME.findall(str(text))}))


def check_vars(given: Any) -> None:
    """Refuse a --vars key no setting reads (a typo would otherwise build, and send, the default)."""
    if not given:
        return
    if not isinstance(given, dict):
        raise ConfigurationError(f"--vars must be a mapping of settings, got {given!r}")
    known = known_vars()
    unknown = [str(name) for name in given if name not in known]
    if unknown:
        hints = "".join(did_you_mean(name, known) for name in unknown)
        raise ConfigurationError(
            f"--vars {', '.join(unknown)}: no such setting{hints}; `loft list settings` prints them"
        )
    for name in NAME_LISTS:
        value = given.get(name)
        if not (value is None or isinstance(value, str) or _names(value)):
            raise ConfigurationError(f"--vars {name} must be a name or a list of names, got {value!r:.120}")


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


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
    settings.share(values.get("answer_health_threshold"), "answer_health_threshold")
    select(
        configured_systems(values.get("systems_file"), values.get("batch"), values.get("thinking")),
        parse_selection(values.get("systems")),
    )
    wanted = registry.parse_selection(values.get("datasets"))
    if wanted:
        for size in sizes:
            registry.specs_for_size(root, size, wanted, quiet=True)
    return root


def preflight(values_json: str, selection_json: str) -> str:
    """The SQL function's body: '' when the settings hold, else the one line to show.
    selection_json: {"resources": dbt's selected_resources, "vars": the --vars given} (or the
    resources list alone)."""
    selection = json.loads(selection_json)
    if isinstance(selection, list):
        selection = {"resources": selection}
    try:
        check_vars(_given_vars(selection.get("vars")))
        check(current_build.settings(json.loads(values_json)), selected_sizes(selection.get("resources") or []))
    except ConfigurationError as exc:
        return f"settings: {exc}"
    return ""


def _given_vars(value: Any) -> Any:
    """dbt's record of --vars: a mapping, or its YAML text."""
    if isinstance(value, str):
        return settings_yaml(value, "--vars") if value.strip() else {}
    return value
