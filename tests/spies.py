"""Counting what the code under test calls, without changing what it does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def spy(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str, note: Callable[..., Any] = lambda *args: args
) -> list[Any]:
    """Wrap owner.name so that each call appends note(*args) to the returned list, then runs
    the real function."""
    calls: list[Any] = []
    real = getattr(owner, name)

    def noted(*args: Any) -> Any:
        calls.append(note(*args))
        return real(*args)

    monkeypatch.setattr(owner, name, noted)
    return calls
