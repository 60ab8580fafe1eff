"""Errors that stop a build and say exactly which input is at fault."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


class BadInputError(ValueError):
    """Input data that must not be silently skipped: names the file and the line (or row)."""

    def __init__(self, path: str | Path, row: int | str | None, message: str) -> None:
        self.path = str(path)
        self.row = row
        self.message = message
        where = f"{self.path}:{row}" if row is not None else self.path
        super().__init__(f"{where}: {message}")


class ConfigurationError(RuntimeError):
    """A setting is missing or wrong; the message says what to set."""


class CostLimitError(RuntimeError):
    """The estimated cost of the calls still to make is above max_cost_usd."""


class OutOfSpaceError(RuntimeError):
    """The disk holding a durable file is full; the message says what was kept and what to do."""


class DataQualityError(RuntimeError):
    """A data-quality suite failed on a built table; the message lists every failure."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest of the choices to a mistyped name, else ''."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
