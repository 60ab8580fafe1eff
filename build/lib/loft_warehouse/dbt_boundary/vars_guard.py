"""The --vars of a plain `dbt` command, checked before dbt walks them.

dbt reads --vars with YAML's safe loader, where an alias is one shared object: 329 bytes of nested
aliases stay small until dbt's manifest check prints them (pprint), which grew past 3 GiB. dbt
sets up its plugins (top-level modules named dbt_*, here python/dbt_loft_vars.py) after reading
the vars and before the manifest: the check there stops such a command in one line, as `loft
build` refuses the text itself (readers.settings_yaml).
"""

from __future__ import annotations

from typing import Any

from dbt.flags import get_flags
from dbt.plugins.manager import dbtPlugin

from loft_warehouse.readers import MAX_SETTINGS_BYTES

PROJECT_NAME = "loft"


def expanded_values(value: Any, cap: int) -> int:
    """The values `value` holds counted as a walk meets them (a shared one each time), up to cap + 1."""
    seen, pending = 0, [value]
    while pending and seen <= cap:
        item = pending.pop()
        seen += 1
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return seen


def check_vars(cli_vars: Any) -> None:
    """No text of at most MAX_SETTINGS_BYTES written out in full holds more values than that."""
    if expanded_values(cli_vars, MAX_SETTINGS_BYTES) > MAX_SETTINGS_BYTES:
        raise RuntimeError(
            f"--vars expands to more than {MAX_SETTINGS_BYTES} values, more than a setting of at most "
            f"{MAX_SETTINGS_BYTES} bytes can write out (YAML aliases?): a setting is written out in full"
        )


class VarsGuard(dbtPlugin):
    """Refuses a command whose --vars would expand past any setting's size (this project only)."""

    def initialize(self) -> None:
        if self.project_name == PROJECT_NAME:
            check_vars(getattr(get_flags(), "VARS", None) or {})
