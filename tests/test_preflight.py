"""Issue 12, item 5: settings are checked before the first model, in one line."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from loft_warehouse.dbt_boundary.preflight import check, preflight, selected_sizes
from loft_warehouse.dbt_boundary.startup import check_command, check_vars, expanded_values
from loft_warehouse.errors import ConfigurationError
from tests.conftest import query, run_dbt
from tests.hostile_inputs import ALIAS_BOMB


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"datasets": "retrieval/arguana,retrieval/nope"}, r"datasets \['retrieval/nope'\] are not built at size 32k"),
        ({"prompt_variants": ["defualt"]}, r"unknown prompt variant\(s\) \['defualt'\]"),
        ({"methods": "cic,magic"}, "unknown method 'magic'"),
        ({"systems": "[bm25, gtp-4o]"}, r"unknown system\(s\) \['gtp-4o'\]"),
        ({"max_cost_usd": "ten dollars"}, "max_cost_usd must be a number, got 'ten dollars'"),
        ({"max_cost_usd": -1}, "max_cost_usd must not be negative"),
        ({"limit": "0"}, "limit must be a positive integer"),
        ({"seed": "abc"}, "seed must be an integer"),
        ({"icr_pages": "five"}, "icr_pages must be an integer"),
        ({"litm_documents": "[10, x]"}, "litm_documents must be a list of integers"),
        ({"retry_errors": "maybe"}, "retry_errors"),
        ({"answer_health_threshold": "5%"}, r"answer_health_threshold must be a number between 0 and 1, got '5%'"),
        ({"answer_health_threshold": "1.5"}, r"answer_health_threshold must be a number between 0 and 1, got '1.5'"),
        ({"tokenizer_model": "/nonexistent/tokenizer.model"}, "tokenizer model /nonexistent/tokenizer.model not found"),
        ({"systems_file": "/nonexistent/systems.yaml"}, "systems file /nonexistent/systems.yaml"),
        ({"batch": "[gtp-4o]"}, r"batch: unknown system\(s\) \['gtp-4o'\]"),
        ({"batch": "bm25"}, r"batch: bm25 is a bm25 system; batch APIs exist for"),
        (
            {"thinking": "{gemini-2.5-flsh: 0}"},
            r"thinking: unknown system\(s\) \['gemini-2.5-flsh'\] \('gemini-2.5-flsh': did you mean 'gemini-2.5-fl",
        ),
        ({"thinking": {"gpt-4o": 1000}}, r"thinking gpt-4o: provider openai takes effort, not 1000"),
    ],
)
def test_each_bad_setting_is_named(shared_data: Path, values: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        check({"data_dir": str(shared_data), **values}, ["32k"])


def test_good_settings_pass_and_the_sql_function_says_nothing(shared_data: Path) -> None:
    values = {"data_dir": str(shared_data), "datasets": "retrieval/*", "systems": "bm25", "max_cost_usd": "5"}
    assert check(values, ["32k", "128k"]) == shared_data
    assert preflight('{"systems": "nope"}', "[]").startswith("settings: unknown system(s) ['nope']")
    assert preflight("{}", '["model.loft.loft_128k__stg_queries"]') == ""


def test_a_folder_without_loft_data_is_named(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ConfigurationError, match=r"this folder holds no LOFT data: expected loft/ .* or raw/"):
        check({"data_dir": str(tmp_path)}, [])


def test_sizes_come_from_the_selection() -> None:
    ids = ["model.loft.loft_1m__corpus", "test.loft.not_null_loft_32k__queries_qid.abc", "seed.loft.paper_table2"]
    assert selected_sizes(ids) == ["32k", "1m"]


@pytest.fixture
def release_only(shared_data: Path, tmp_path: Path) -> Path:
    root = tmp_path / "data"
    root.mkdir()
    (root / "loft").symlink_to(shared_data / "loft")
    (root / "tokenizers").symlink_to(shared_data / "tokenizers")
    return root


def test_a_bad_setting_stops_dbt_build_first_and_once(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_dbt(["build", "--select", "loft_32k", "--vars", "{systems: [gtp-4o]}"], tmp_path / "w.duckdb")
    elapsed = time.monotonic() - started
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert out.count("settings: unknown system(s) ['gtp-4o']") == 1, out[-3000:]
    assert "Traceback" not in out
    assert "START sql" not in out and "START python" not in out
    assert elapsed < 60


def test_plain_dbt_refuses_vars_that_expand_past_any_setting_before_walking_them(tmp_path: Path) -> None:
    """Issue 60 item 2: `dbt build --vars` with a 329-byte alias bomb grew past 3.1 GiB in dbt's
    manifest check (pprint of the vars); the project's dbt plugin refuses it first."""
    started = time.monotonic()
    result = run_dbt(["build", "--select", "loft_32k", "--vars", ALIAS_BOMB], tmp_path / "w.duckdb")
    out = result.stdout + result.stderr
    assert result.returncode == 2, out[-3000:]
    assert out.count("--vars expands to more than 65536 values") == 1 and "Traceback" not in out, out[-3000:]
    assert time.monotonic() - started < 60
    assert expanded_values({"a": [1, [2, 3]]}, 100) == 7  # the mapping, its key, two lists, three numbers
    shared = [1] * 9
    assert expanded_values([shared] * 9, 50) == 51  # stops counting past the cap
    check_vars({"datasets": ["retrieval/nq"] * 1000, "limit": 3})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vars", "{limt: 3}"], "--vars limt: no such setting (did you mean 'limit'?)"),
        (["--vars", "{methods: [cicc]}"], "unknown method 'cicc' (did you mean 'cic'?)"),
        (["--select", "loft_12k"], "--select loft_12k: no such size (did you mean 'loft_128k'?)"),
    ],
)
def test_plain_dbt_refuses_a_typo_at_its_start_before_parsing(tmp_path: Path, args: list[str], message: str) -> None:
    """Issue 54 item 3: plain `dbt build` refused these after its parse (12.5-15.5 s), and an
    unknown size in dbt's own words; the project's dbt plugin refuses them first."""
    selection = [] if "--select" in args else ["--select", "loft_128k"]
    result = run_dbt(["build", *selection, *args], tmp_path / "w.duckdb")
    out = result.stdout + result.stderr
    assert result.returncode == 2 and out.count(f"settings: {message}") == 1, out[-3000:]
    assert "Traceback" not in out and "Found " not in out  # refused before dbt's parse reports the project


def test_a_checked_build_is_not_checked_again_at_dbts_start(monkeypatch: pytest.MonkeyPatch) -> None:
    checks: list[str] = []
    monkeypatch.setattr("loft_warehouse.dbt_boundary.preflight.check", lambda values, sizes: checks.append("check"))
    check_command("build", ["loft_128k"], {"limit": 3}, {})
    check_command("build", ["loft_128k"], {"limit": 3}, {"LOFT_SETTINGS_CHECKED": "1"})
    check_command("ls", ["loft_128k"], {}, {})
    assert checks == ["check"]
    with pytest.raises(ConfigurationError, match="no such size"):
        check_command("ls", ["loft_2k"], {}, {"LOFT_SETTINGS_CHECKED": "1"})


def test_a_release_only_data_dir_builds_its_datasets_and_skips_raw_in_one_line(release_only: Path, tmp_path) -> None:
    database = tmp_path / "w.duckdb"
    result = run_dbt(["build", "--select", "loft_32k", "--vars", f"{{data_dir: {release_only}}}"], database)
    assert result.returncode == 0, result.stdout[-5000:]
    assert "FileNotFoundError" not in result.stdout
    skipped = [line for line in result.stdout.splitlines() if line.startswith(f"no raw/ in {release_only}:")]
    assert skipped and "sql/spider" in skipped[0] and "icl/bbh_date" in skipped[0]
    assert query(database, "select distinct task || '/' || dataset from loft_32k.queries") == [("retrieval/arguana",)]
    named = run_dbt(
        ["build", "--select", "loft_32k", "--vars", f"{{data_dir: {release_only}, datasets: [sql/spider]}}"], database
    )
    assert named.returncode != 0
    assert "settings: datasets ['sql/spider'] are built from raw sources, but" in named.stdout


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ({"datasets": [["retrieval/nq"]]}, "datasets must be a name or a list of names, got [['retrieval/nq']]"),
        ({"datasets": {"retrieval/nq": 1}}, "datasets must be a name or a list of names, got {'retrieval/nq': 1}"),
        ({"systems": [["gpt-4o"]]}, "systems must be a name or a list of names"),
        ({"methods": [{"cic": 1}]}, "methods must be a name or a list of names"),
        ({"prompt_variants": 3}, "prompt_variants must be a name or a list of names"),
    ],
)
def test_a_nested_name_list_is_one_line(given: dict, shown: str) -> None:
    """Issue 60 item 9: `datasets: [[retrieval/nq]]` ended in an AttributeError traceback."""
    assert preflight("{}", json.dumps({"resources": [], "vars": given})).startswith(f"settings: --vars {shown}")
