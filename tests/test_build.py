"""`loft build`: sizes and settings refused in one line before dbt starts, dbt run in the project
folder from anywhere."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from loft_warehouse.cli import main
from loft_warehouse.dbt_boundary import build
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.settings import PROJECT_ROOT
from tests.hostile_inputs import ALIAS_BOMB

POPEN = subprocess.Popen  # the no_dbt fixture replaces it
HEARTBEAT = re.compile(r"staging \S+ \(read, validate, tokenize\): \d+/\d+ done, ")


class NoDbt:
    """Stands in for subprocess.Popen: records what would have started."""

    started: list[dict[str, Any]] = []
    output: list[str] = []
    results = ""
    code = 0

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], **_: Any) -> None:
        NoDbt.started.append({"argv": argv, "cwd": cwd, "env": env})
        self.stdout = iter(NoDbt.output)
        if NoDbt.results:  # what the on-run-end hook leaves for `loft build` (current_build.hold_results)
            Path(env["LOFT_RESULTS_FILE"]).write_text(NoDbt.results)

    def wait(self) -> int:
        return NoDbt.code


@pytest.fixture
def no_dbt(monkeypatch: pytest.MonkeyPatch, shared_data: Path) -> type[NoDbt]:
    NoDbt.started = []
    NoDbt.output = []
    NoDbt.results = ""
    NoDbt.code = 0
    monkeypatch.setattr(build.subprocess, "Popen", NoDbt)
    monkeypatch.setenv("LOFT_DATA_DIR", str(shared_data))
    return NoDbt


@pytest.mark.parametrize(
    ("selection", "sizes"),
    [
        (["loft_128k"], ["128k"]),
        (["+loft_32k__leaderboard", "loft_compare"], ["32k"]),
        (["loft_128k__int_imported_queries+,+loft_128k__leaderboard"], ["128k"]),
        (["loft_1m", "loft_32k"], ["32k", "1m"]),
        (["tag:nightly"], []),
    ],
)
def test_the_sizes_a_selection_names(selection: list[str], sizes: list[str]) -> None:
    assert build.selected_sizes(selection) == sizes


def test_an_unknown_size_is_refused_before_dbt_starts(
    no_dbt: type[NoDbt], capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOFT_DUCKDB_PATH", str(tmp_path / "w.duckdb"))
    assert main(["build", "--select", "loft_64k"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "loft build: --select loft_64k: no such size (did you mean 'loft_32k'?); "
        "the sizes are loft_32k, loft_128k, loft_1m (and loft_compare) "
        f"(nothing was built; {tmp_path / 'w.duckdb'} is as it was)\n"
    )
    assert no_dbt.started == []


def test_a_typo_in_a_setting_is_refused_before_dbt_starts(no_dbt: type[NoDbt], capsys: pytest.CaptureFixture) -> None:
    assert main(["build", "--select", "loft_32k", "--vars", "{systems: [gtp-4o]}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'gpt-4o'?" in err
    assert no_dbt.started == []


def test_dbt_runs_in_the_project_folder_from_anywhere(
    no_dbt: type[NoDbt], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOFT_DUCKDB_PATH", "mine.duckdb")
    assert main(["build", "--select", "loft_32k", "--vars", "{limit: 3}"]) == 0
    (started,) = no_dbt.started
    assert started["cwd"] == PROJECT_ROOT
    # the selection reaches the models at run time (no new parse), not as a dbt var
    assert started["argv"][1:] == [
        "build", "--select", "loft_32k", "--project-dir", str(PROJECT_ROOT), "--profiles-dir", str(PROJECT_ROOT),
    ]  # fmt: skip
    assert started["env"]["LOFT_RUNTIME_SETTINGS"].endswith(".json")
    assert started["env"]["LOFT_DUCKDB_PATH"] == str(tmp_path / "mine.duckdb")


def test_a_build_ends_with_its_results_table_then_its_outcome(
    no_dbt: type[NoDbt], capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOFT_DUCKDB_PATH", str(tmp_path / "w.duckdb"))
    monkeypatch.delenv("LOFT_BUILD_IN_PLACE", raising=False)
    no_dbt.output = ["12:00:01  Done. PASS=157 WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL=157\n"]
    no_dbt.results = "results: 1 primary metric(s) added, changed or removed by this build\nsystem ...\nbm25 ...\n"
    assert main(["build", "--select", "loft_32k"]) == 0
    assert capsys.readouterr().out.splitlines()[-5:] == [
        "12:00:01  Done. PASS=157 WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL=157",
        "results: 1 primary metric(s) added, changed or removed by this build",
        "system ...",
        "bm25 ...",
        f"loft build: passed; published {tmp_path / 'w.duckdb'}",
    ]
    no_dbt.results, no_dbt.code = "", 1
    assert main(["build", "--select", "loft_32k"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"loft build: failed (dbt exit 1); nothing published, {tmp_path / 'w.duckdb'} holds the last good build"
    )


def test_a_var_wins_over_its_environment_fallback() -> None:
    values = build.preflight_values({"limit": 3}, {"LOFT_LIMIT": "7", "LOFT_SYSTEMS": "bm25"})
    assert (values["limit"], values["systems"], values["methods"]) == (3, "bm25", "cic")


def test_vars_that_are_not_a_mapping_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="must be a mapping"):
        build.build_vars("[1, 2]")


def test_a_yaml_alias_in_vars_is_refused_before_it_expands(no_dbt: type[NoDbt], capsys: pytest.CaptureFixture) -> None:
    """Issue 60 item 2: nine levels of nine aliases (a few hundred bytes) are 9**9 items wherever the
    value is walked; the seed's own message (its repr) grew past 1.2 GiB before it was refused."""
    assert len(ALIAS_BOMB) < 400
    assert main(["build", "--select", "loft_32k", "--vars", ALIAS_BOMB]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--vars: YAML alias at line 1, column 43" in err, err[:300]
    assert no_dbt.started == []
    with pytest.raises(ConfigurationError, match="a setting is at most 65536"):
        build.build_vars("{limit: 3, note: '" + "x" * 2**16 + "'}")
    assert build.build_vars("{limit: 3, datasets: [retrieval/nq]}") == {"limit": 3, "datasets": ["retrieval/nq"]}
    with pytest.raises(ConfigurationError, match="--vars is nested too deeply to read"):  # was a RecursionError
        build.build_vars("{limit: " + "[" * 3000 + "]" * 3000 + "}")


def test_the_checked_values_are_what_dbt_gives_the_models(tmp_path: Path) -> None:
    """`loft build` checks dbt_project.yml's settings as dbt renders them for the models (and the
    preflight hook): the same vars, environment fallbacks, defaults and types."""
    environ = {name: value for name, value in os.environ.items() if not name.startswith("LOFT_")}
    environ |= {"LOFT_SYSTEMS": "bm25", "LOFT_RETRY_ERRORS": "true"}
    given = {"limit": 3, "prompt_variants": ["default", "no_cot"]}
    parsed = subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), "parse", "--vars", json.dumps(given),
         "--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")],
        cwd=PROJECT_ROOT, env=environ, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert parsed.returncode == 0, parsed.stdout[-2000:]
    manifest = json.loads((tmp_path / "target" / "manifest.json").read_text(encoding="utf-8"))
    rendered = manifest["nodes"]["model.loft.loft_32k__int_stage1_responses"]["config"]["loft"]
    values = build.preflight_values(given, environ)
    assert values == rendered
    assert (values["limit"], values["systems"], values["retry_errors"], values["seed"]) == (3, "bm25", "true", 20240612)


def test_a_ctrl_c_ends_in_one_line_saying_what_was_published(
    no_dbt: type[NoDbt], capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOFT_DUCKDB_PATH", str(tmp_path / "w.duckdb"))
    no_dbt.output = [
        "12:00:00  156 of 205 START sql table model loft_32k.stage_retrieval\n",
        "12:00:01  Exited because of keyboard interrupt\n",
        "12:00:01  Done. PASS=157 WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL=157\n",
        "12:00:01  Encountered an error:\n",
        "Traceback (most recent call last):\n",
        "KeyboardInterrupt\n",
    ]
    assert main(["build", "--select", "loft_32k"]) == 130
    out, err = capsys.readouterr()
    assert "Traceback" not in out and "KeyboardInterrupt" not in out
    assert out.splitlines()[-1].endswith("Done. PASS=157 WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL=157")
    # The preflight's staging prints heartbeat lines when it takes over 10 s (a loaded machine).
    err = "".join(line for line in err.splitlines(keepends=True) if not HEARTBEAT.match(line))
    assert err == (
        f"loft build: interrupted; nothing of this build was published ({tmp_path / 'w.duckdb'} holds the last good "
        "build); rerun the same command to resume without paying twice for stored responses\n"
    )


def test_a_file_that_cannot_be_opened_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A warehouse of its own: the project's (after `make build`) holds arguana from the data.
    monkeypatch.setenv("LOFT_DUCKDB_PATH", str(tmp_path / "loft.duckdb"))
    missing, queries = tmp_path / "preds.jsonl", shared_data / "loft/retrieval/arguana/128k/test_queries.jsonl"
    command = f"import-predictions {missing} --queries {queries} --system s --size 128k --task retrieval "
    command += f"--dataset arguana --imports-dir {tmp_path / 'imports'}"
    assert main(command.split()) == 2
    assert capsys.readouterr().err == f"loft import-predictions: No such file or directory: {missing}\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG) is Linux's")
def test_a_killed_loft_build_leaves_no_dbt_behind(tmp_path: Path) -> None:
    """SIGKILL of `loft build` (which no handler sees) ends the process it started for dbt."""
    child_pid, child = tmp_path / "child.pid", tmp_path / "child.py"
    child.write_text(f"import os, time\nopen({str(child_pid)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n")
    script = (
        "import os, sys\nfrom loft_warehouse.dbt_boundary import build\n"
        f"build._run_dbt([sys.executable, {str(child)!r}], dict(os.environ))\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    for _ in range(400):
        if child_pid.exists() and child_pid.read_text():
            break
        time.sleep(0.05)
    pid = int(child_pid.read_text())
    parent.kill()
    parent.wait()
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower():
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        pytest.fail("dbt's process outlived a killed loft build")


def test_a_failed_build_says_which_node_failed_and_why(tmp_path: Path) -> None:
    run_results = tmp_path / "run_results.json"
    reason = "inference run: estimated $36.45 exceeds max_cost_usd=$0.01"
    message = f"Runtime Error in model loft_128k__int_stage1_responses (models/...py)\n  {reason}"
    run_results.write_text(json.dumps({"results": [
        {"unique_id": "model.loft.loft_128k__corpus", "status": "success", "message": "OK"},
        {"unique_id": "model.loft.loft_128k__int_stage1_responses", "status": "error", "message": message},
    ]}))  # fmt: skip
    failure = build.first_failure(run_results, since=0)
    assert failure == f"loft_128k__int_stage1_responses: {reason}"
    assert build.first_failure(run_results, since=run_results.stat().st_mtime + 60) is None  # an earlier run's file
    line = build.outcome("loft build", 1, tmp_path / "w.duckdb", {}, failure)
    warehouse = tmp_path / "w.duckdb"
    assert line.startswith(f"loft build: failed (dbt exit 1; {failure}); nothing published, ")
    assert line.endswith(f"{warehouse} holds the last good build")


@pytest.mark.parametrize("in_place", [False, True])
def test_a_second_build_while_one_writes_is_one_line(
    no_dbt: type[NoDbt], tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, in_place: bool
) -> None:
    """Issue 60 item 9: DuckDB's lock error reached the user as a 40-line traceback from dbt."""
    warehouse = tmp_path / "w.duckdb"
    working = warehouse if in_place else tmp_path / "w.duckdb.build"
    monkeypatch.setenv("LOFT_DUCKDB_PATH", str(warehouse))
    monkeypatch.setenv("LOFT_BUILD_IN_PLACE", "1" if in_place else "")
    hold = f"import duckdb, sys, time; c = duckdb.connect({str(working)!r}); print('open', flush=True); time.sleep(60)"
    holder = POPEN([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        assert main(["build", "--select", "loft_32k"]) == 2
    finally:
        holder.kill()
        holder.wait()
    assert capsys.readouterr().err == (
        f"loft build: another process is writing {working} (a build still running?); wait for it to end or "
        f"stop it (nothing was built; {warehouse} is as it was)\n"
    )
    assert no_dbt.started == []
    assert main(["build", "--select", "loft_32k"]) == 0 and len(no_dbt.started) == 1


@pytest.fixture
def read_only_folder(tmp_path: Path):
    """A folder this process cannot write in: without write permission, or (as root, whom
    permissions do not stop) a read-only tmpfs."""
    folder = tmp_path / "published"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], check=False).returncode:
        pytest.skip("running as root and cannot mount a read-only tmpfs")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_warehouse_in_a_folder_that_cannot_be_written_is_one_line(
    read_only_folder: Path, no_dbt: type[NoDbt], capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 60 item 9: DuckDB's IO error on the working file was a traceback from dbt's pool."""
    monkeypatch.setenv("LOFT_DUCKDB_PATH", str(read_only_folder / "loft.duckdb"))
    assert main(["build", "--select", "loft_32k"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"loft build: cannot write in {read_only_folder} (")
    assert "point LOFT_DUCKDB_PATH at a folder you can write" in err
    assert no_dbt.started == []
