"""The provider registry: every provider a system can name has its clients, and the modules that
run, batch, price and select systems look providers up instead of naming them."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from loft_warehouse.inference.providers.registry import BATCH_PROVIDERS, PROVIDERS
from loft_warehouse.inference.systems import DEFAULT_SYSTEMS_FILE, load_systems

INFERENCE = Path(__file__).resolve().parents[2] / "python" / "loft_warehouse" / "inference"
LOOKS_UP = ("systems.py", "runner.py", "batch_run.py", "batch_clients.py", "cost.py", "warehouse.py", "executors.py")


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_each_provider_has_its_clients(name: str) -> None:
    kind = PROVIDERS[name]
    assert callable(importlib.import_module(kind.client).provider)
    if kind.batch is not None:
        module, _, cls = kind.batch.client.partition(":")
        assert callable(getattr(importlib.import_module(module), cls))
        assert kind.batch.max_requests > 0 and kind.batch.max_bytes > 0


def test_batch_providers_are_those_with_a_batch_api() -> None:
    assert BATCH_PROVIDERS == ("gemini", "openai", "anthropic")


def test_every_shipped_system_names_a_registered_provider() -> None:
    systems = load_systems(DEFAULT_SYSTEMS_FILE)
    assert systems and all(system.kind is PROVIDERS[system.provider] for system in systems.values())


@pytest.mark.parametrize("module", LOOKS_UP)
def test_no_branch_on_a_provider_name(module: str) -> None:
    """`x.provider == "openai"`, `x.provider in (...)` and the like stay inside providers/."""
    tree = ast.parse((INFERENCE / module).read_text(encoding="utf-8"))
    branches = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(isinstance(side, ast.Attribute) and side.attr == "provider" for side in [node.left, *node.comparators])
    ]
    assert branches == []
