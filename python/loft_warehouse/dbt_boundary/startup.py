"""The checks a plain `dbt` command gets at its start, before dbt parses anything.

dbt sets up its plugins (top-level modules named dbt_*, here python/dbt_loft_checks.py) once it
has read --select and --vars and loaded the project, before the manifest. Two things cannot wait
for the on-run-start hook (macros/preflight.sql):
- --vars that expand past any setting: YAML's safe loader keeps an alias as one shared object, so
  329 bytes of nested aliases stay small until dbt's manifest check prints them (pprint), which
  grew past 3 GiB;
- a `--select loft_<size>` naming no size: dbt refuses it in its own selection step, before any
  hook, without a did-you-mean.
For `dbt build` and `dbt run` every other setting is checked here too (preflight.check, as
`loft build` checks it), so a typo stops the command in seconds instead of after the parse; the
hook still checks what dbt selected. `loft build` and an import's --build have checked already
(current_build.SETTINGS_CHECKED_ENV).
"""

from __future__ import annotations

import os
from typing import Any

from dbt.flags import get_flags
from dbt.plugins.manager import dbtPlugin

from loft_warehouse import current_build
from loft_warehouse.dbt_boundary import build, preflight
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.readers import MAX_SETTINGS_BYTES

PROJECT_NAME = "loft"
CHECKED_COMMANDS = ("build", "run")


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
        raise ConfigurationError(
            f"--vars expands to more than {MAX_SETTINGS_BYTES} values, more than a setting of at most "
            f"{MAX_SETTINGS_BYTES} bytes can write out (YAML aliases?): a setting is written out in full"
        )


def check_command(command: str, select: list[str], cli_vars: Any, environ: dict[str, str]) -> None:
    """What a dbt command's start can refuse: its vars' size, its sizes, and for a build or run
    not started by `loft` every setting."""
    check_vars(cli_vars)
    sizes = build.selected_sizes(select)
    if command not in CHECKED_COMMANDS or environ.get(current_build.SETTINGS_CHECKED_ENV):
        return
    preflight.check_vars(cli_vars)
    preflight.check(current_build.settings(build.preflight_values(cli_vars or {}, environ)), sizes)


class StartupChecks(dbtPlugin):
    """check_command for this project's commands, its refusal in one line (`settings: ...`)."""

    def initialize(self) -> None:
        if self.project_name != PROJECT_NAME:
            return
        flags = get_flags()
        try:
            check_command(
                str(getattr(flags, "WHICH", "")),
                [str(term) for term in getattr(flags, "SELECT", None) or ()],
                getattr(flags, "VARS", None) or {},
                dict(os.environ),
            )
        except ConfigurationError as exc:
            raise RuntimeError(f"settings: {exc}") from None
