"""loft_scoring_code_version(): the scoring code's digest, which every stored score row's run
fingerprint includes, changes with any file the scores depend on and with nothing else."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loft_warehouse.scoring import duckdb_functions
from loft_warehouse.settings import PROJECT_ROOT


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the files SCORING_CODE names (and one it does not), as the project root."""
    for pattern in [*duckdb_functions.SCORING_CODE, "python/loft_warehouse/dashboard/*.py"]:
        for path in PROJECT_ROOT.glob(pattern):
            target = tmp_path / path.relative_to(PROJECT_ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    monkeypatch.setattr(duckdb_functions, "PROJECT_ROOT", tmp_path)
    duckdb_functions.scoring_code_version.cache_clear()
    yield tmp_path
    duckdb_functions.scoring_code_version.cache_clear()


def _version() -> str:
    duckdb_functions.scoring_code_version.cache_clear()
    return duckdb_functions.scoring_code_version()


@pytest.mark.parametrize(
    "changed",
    ["macros/scoring_exec_acc.sql", "models/loft_128k/intermediate/loft_128k__int_turn_scores.sql",
     "models/loft_128k/marts/loft_128k__scores.sql", "python/loft_warehouse/sql/exec_accuracy.py",
     "python/loft_warehouse/answers/parse.py"],
)  # fmt: skip
def test_a_change_to_scoring_code_changes_the_version(project: Path, changed: str) -> None:
    before = _version()
    with (project / changed).open("a", encoding="utf-8") as file:
        file.write("\n")
    assert _version() != before


def test_other_code_leaves_it(project: Path) -> None:
    before = _version()
    with (project / "python/loft_warehouse/dashboard/app.py").open("a", encoding="utf-8") as file:
        file.write("\n")
    assert _version() == before
    assert len(before) == 16 and before == _version()
