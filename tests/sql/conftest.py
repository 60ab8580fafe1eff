"""Shared fixtures: the real data root (skips when the shared data is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loft_warehouse import settings
from loft_warehouse.errors import ConfigurationError


@pytest.fixture(scope="session")
def root() -> Path:
    try:
        path = settings.data_dir()
    except ConfigurationError:
        pytest.skip("shared data not available")
    if not (path / "raw" / "spider").is_dir():
        pytest.skip("raw Spider data not available")
    return path
