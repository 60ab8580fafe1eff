"""The data-directory setting: explicit value, environment, ../shared/data default, clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from loft_warehouse import settings
from loft_warehouse.errors import ConfigurationError


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setattr(settings, "PROJECT_ROOT", root)
    monkeypatch.delenv("LOFT_DATA_DIR", raising=False)
    return root


def test_default_is_shared_data_beside_the_project(project: Path) -> None:
    shared = project.parent / "shared" / "data"
    shared.mkdir(parents=True)
    assert settings.data_dir() == shared


def test_missing_default_says_what_to_set(project: Path) -> None:
    with pytest.raises(ConfigurationError, match="set LOFT_DATA_DIR"):
        settings.data_dir()


def test_environment_wins_over_default(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project.parent / "shared" / "data").mkdir(parents=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    monkeypatch.setenv("LOFT_DATA_DIR", str(mine))
    assert settings.data_dir() == mine


def test_explicit_setting_wins_and_relative_paths_are_project_relative(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("LOFT_DATA_DIR", "/nonexistent")
    (project / "data").mkdir()
    assert settings.data_dir("data") == project / "data"


def test_a_setting_that_does_not_exist_is_an_error(project: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        settings.data_dir("/no/such/folder")


def test_budgets_are_ninety_percent() -> None:
    assert [s.budget for s in settings.SIZES.values()] == [28_800, 115_200, 900_000]
    with pytest.raises(ConfigurationError):
        settings.size("2m")
    assert settings.context("2k").budget == 1_800 and settings.context("1m") == settings.size("1m")
    with pytest.raises(ConfigurationError, match="unknown context length"):
        settings.context("3k")
