"""Fixtures: the 127.0.0.1 server speaking OpenAI, Gemini and Anthropic REST, a store, keys in the env."""

from __future__ import annotations

from pathlib import Path

import pytest

from loft_warehouse.inference.fixture_server import FixtureServer, FixtureState
from loft_warehouse.inference.store import ResponseStore
from tests.inference.support import fixture_env


@pytest.fixture
def server():
    with FixtureServer(FixtureState()) as running:
        yield running


@pytest.fixture
def api_env(monkeypatch: pytest.MonkeyPatch, server: FixtureServer) -> FixtureServer:
    """Keys and endpoints of the three test systems pointed at the fixture."""
    for name, value in fixture_env(server).items():
        monkeypatch.setenv(name, value)
    return server


@pytest.fixture
def store(tmp_path: Path):
    with ResponseStore(tmp_path / "store.sqlite") as opened:
        yield opened
