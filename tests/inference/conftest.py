"""Fixtures: the 127.0.0.1 server speaking OpenAI, Gemini and Anthropic REST, a store, keys in the env."""

from __future__ import annotations

from pathlib import Path

import pytest

from loft_warehouse.inference.fixture_server import FixtureServer, FixtureState
from loft_warehouse.inference.store import ResponseStore


@pytest.fixture
def server():
    with FixtureServer(FixtureState()) as running:
        yield running


@pytest.fixture
def api_env(monkeypatch: pytest.MonkeyPatch, server: FixtureServer) -> FixtureServer:
    """Keys and endpoints of both test systems pointed at the fixture."""
    monkeypatch.setenv("LOFT_TEST_OPENAI_KEY", "sk-test-key")
    monkeypatch.setenv("LOFT_TEST_OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("LOFT_TEST_GEMINI_KEY", "gm-test-key")
    monkeypatch.setenv("LOFT_TEST_GEMINI_BASE_URL", server.url)
    monkeypatch.setenv("LOFT_TEST_ANTHROPIC_KEY", "sk-ant-test-key")
    monkeypatch.setenv("LOFT_TEST_ANTHROPIC_BASE_URL", server.url)
    return server


@pytest.fixture
def store(tmp_path: Path):
    with ResponseStore(tmp_path / "store.sqlite") as opened:
        yield opened
