"""Fixtures for source loaders: the real data root, and tmp roots mirroring raw/ for bad input."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from loft_warehouse import registry, settings
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.registry import DatasetSpec


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The shared data root; tests on real data skip where it is absent."""
    try:
        path = settings.data_dir()
    except ConfigurationError:
        pytest.skip("shared data not available (set LOFT_DATA_DIR)")
    if not (path / "raw").is_dir():
        pytest.skip(f"{path} has no raw/ folder")
    return path


class RawTree:
    """Writes small source files under a tmp data root, in the layout of the real raw/ folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def lines(self, relative: str, lines: Iterable[str]) -> Path:
        """Text lines (gzip when the name ends in .gz)."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(f"{line}\n" for line in lines)
        if path.suffix == ".gz":
            with gzip.open(path, "wt", encoding="utf-8") as handle:
                handle.write(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def jsonl(self, relative: str, records: Iterable[Any]) -> Path:
        """One JSON value per line; a str record is written verbatim (to plant a bad line)."""
        return self.lines(relative, (r if isinstance(r, str) else json.dumps(r) for r in records))

    def json(self, relative: str, content: Any) -> Path:
        """A whole JSON document, indented so that records sit on known lines."""
        return self.lines(relative, [json.dumps(content, indent=1)])


@pytest.fixture
def raw(tmp_path: Path) -> RawTree:
    return RawTree(tmp_path)


def registered(task: str, dataset: str) -> DatasetSpec:
    """The registry's spec for a dataset (tests run the loaders as the build configures them)."""
    return next(s for s in registry.specs() if (s.task, s.dataset) == (task, dataset))


@pytest.fixture
def spec_of():
    return registered
