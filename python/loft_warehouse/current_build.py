"""Which dbt invocation this process is building, so that a Python model can tell the partitions
this build rendered (their `build_id`) from those carried from earlier builds (macros/accumulate.sql).

The on-run-start hook sets it (macros/publish.sql, `loft_build_started`); outside a build it is
None and nothing is told apart.
"""

from __future__ import annotations

_CURRENT: dict[str, str] = {}


def started(invocation_id: str, _unused: str) -> str:
    """The hook's SQL function (two text arguments, as every hook's): remember this build's
    invocation id; '' back (nothing to say)."""
    _CURRENT["build_id"] = invocation_id
    return ""


def build_id() -> str | None:
    """This build's invocation id, or None outside a dbt build."""
    return _CURRENT.get("build_id")
