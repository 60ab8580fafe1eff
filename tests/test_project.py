"""Project-level guarantees: size folders in sync, selections that match nothing fail."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml
from dbt.parser.models import PythonParseVisitor

from loft_warehouse.settings import PROJECT_ROOT
from loft_warehouse.size_models import differences
from tests.conftest import run_dbt


def test_size_folders_are_copies_of_the_template() -> None:
    assert differences() == []


def _is_config_get(node: ast.AST) -> bool:
    func = getattr(node, "func", None)
    return ast.unparse(func) == "dbt.config.get" if isinstance(node, ast.Call) and func is not None else False


def test_dbt_sees_every_config_a_python_model_reads() -> None:
    """dbt hands a Python model only the config keys its parser finds in the source; a
    dbt.config.get inside an expression it does not walk (e.g. `(a or b).get(...)`) reads None."""
    unseen = {}
    for path in sorted((PROJECT_ROOT / "models").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        read = {node.args[0].value for node in ast.walk(tree) if _is_config_get(node)}
        visitor = PythonParseVisitor(path.name)
        visitor.visit(tree)
        seen = {args[0] for name, args, _ in visitor.dbt_function_calls if name == "get"}
        if read - seen:
            unseen[path.name] = sorted(read - seen)
    assert unseen == {}


def test_selection_matching_nothing_fails(tmp_path: Path) -> None:
    """An unknown size is refused at dbt's start with the sizes (issue 54 item 3: plain dbt gave
    its own Compilation Error, no did-you-mean); any other name is dbt's to refuse."""
    result = run_dbt(["build", "--select", "loft_2m"], tmp_path / "loft.duckdb")
    assert result.returncode != 0
    assert "settings: --select loft_2m: no such size (did you mean 'loft_1m'?)" in result.stdout, result.stdout[-2000:]
    assert "START" not in result.stdout
    other = run_dbt(["build", "--select", "no_such_model"], tmp_path / "loft.duckdb")
    assert other.returncode != 0
    assert "does not match any enabled nodes" in other.stdout


def test_each_size_selection_matches_its_folder(tmp_path: Path) -> None:
    for label in ("32k", "128k", "1m"):
        result = run_dbt(["ls", "--select", f"loft_{label}", "--resource-type", "model"], tmp_path / "loft.duckdb")
        assert result.returncode == 0, result.stdout
        names = [line.rsplit(".", 1)[-1] for line in result.stdout.splitlines() if line.startswith("loft.")]
        assert f"loft_{label}__corpus" in names and f"loft_{label}__queries" in names
        assert all(name.startswith(f"loft_{label}__") for name in names)


def test_cli_reports_bad_settings_in_one_line(capsys, monkeypatch, tmp_path: Path) -> None:
    from loft_warehouse.cli import main

    monkeypatch.setenv("LOFT_DUCKDB_PATH", str(tmp_path / "missing.duckdb"))
    assert (
        main(
            [
                "import-sql-predictions",
                str(tmp_path / "p.jsonl"),
                "--system",
                "x",
                "--size",
                "128k",
                "--dataset",
                "spider",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert err.startswith("loft import-sql-predictions: ") and "missing.duckdb" in err and "\n" not in err


def _view_models() -> list[Path]:
    """The SQL models of the template size materialised as views (in their yml or their file)."""
    views = set()
    for path in (PROJECT_ROOT / "models" / "loft_128k").rglob("*.yml"):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")).get("models", []):
            if (entry.get("config") or {}).get("materialized") == "view":
                views.add(entry["name"])
    files = sorted((PROJECT_ROOT / "models" / "loft_128k").rglob("*.sql"))
    return [f for f in files if f.stem in views or "materialized='view'" in f.read_text(encoding="utf-8")]


def test_views_name_no_catalog() -> None:
    """A view reads its inputs through view_ref (no catalog), so a renamed or copied warehouse
    file still serves it; ref() would bind it to the file name it was built under."""
    views = _view_models()
    assert len(views) >= 5
    bound = [f.name for f in views if re.search(r"(?<!view_)ref\(", f.read_text(encoding="utf-8"))]
    assert bound == []
