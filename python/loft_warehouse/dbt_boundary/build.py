"""`loft build`: `dbt build` from any folder, with the sizes and settings checked before dbt
parses the project.

dbt reads the whole project (about 15-30 s) before its first hook can look at a setting, and
run from another folder it fails on its profiles folder. This command checks the selection's
sizes and every setting the preflight hook checks (the same code, on dbt_project.yml's settings
rendered with the same vars and environment) first, says what is wrong in one line, and then runs dbt
in the project folder, so the warehouse and its store are the ones a build from there uses.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from jinja2.nativetypes import NativeEnvironment, NativeTemplate, native_concat

from loft_warehouse import current_build, interrupts
from loft_warehouse.dbt_boundary import preflight
from loft_warehouse.dbt_boundary.publish import refuse_a_second_writer, working_file
from loft_warehouse.errors import ConfigurationError, did_you_mean
from loft_warehouse.inference.cli import warehouse_path
from loft_warehouse.readers import settings_yaml
from loft_warehouse.settings import PROJECT_ROOT, SIZES

# Schemas a selection may name besides the sizes.
OTHER_SCHEMAS = ("compare",)
SCHEMA_TERM = re.compile(r"(?:^|[\s,+@:])(?:\d+\+)?loft_([0-9a-z]+)(?=__|\+|,|\s|$)")
# Environment settings that hold a path: a relative one is read from the folder `loft build`
# was started in, as it would be by dbt started there.
PATH_SUFFIXES = ("_PATH", "_DIR", "_FILE", "_STORE")
# dbt's line on a Ctrl-C, and its summary line.
DBT_INTERRUPTED = "Exited because of keyboard interrupt"
DBT_SUMMARY = "Done. PASS="
# prctl's option that gives a child a signal when its parent dies (Linux).
PR_SET_PDEATHSIG = 1


def selected_sizes(selection: list[str]) -> list[str]:
    """The sizes the --select terms name; an unknown `loft_<size>` is refused, naming the sizes."""
    named = {match.group(1) for term in selection for match in SCHEMA_TERM.finditer(term)}
    unknown = sorted(named - set(SIZES) - set(OTHER_SCHEMAS))
    if unknown:
        terms = ", ".join(f"loft_{name}" for name in unknown)
        choices = ", ".join(f"loft_{size}" for size in SIZES)
        names = [f"loft_{size}" for size in (*SIZES, *OTHER_SCHEMAS)]
        hints = "".join(did_you_mean(f"loft_{name}", names) for name in unknown)
        raise ConfigurationError(f"--select {terms}: no such size{hints}; the sizes are {choices} (and loft_compare)")
    return [size for size in SIZES if size in named]


def build_vars(text: str | None) -> dict[str, Any]:
    """The --vars mapping (YAML, as dbt reads it)."""
    if not text:
        return {}
    values = settings_yaml(text, "--vars")
    if not isinstance(values, dict):
        raise ConfigurationError(f"--vars must be a mapping, got {text!r}")
    return values


class _EnvironmentText(str):
    """A value read by env_var: dbt hands it to the models as text, even when it reads as a number."""


class _DbtNativeEnvironment(NativeEnvironment):
    """Native rendering as dbt does it: an env_var value stays the text it was."""

    @staticmethod
    def concat(values: Any) -> Any:  # type: ignore[override]
        parts = list(values)
        if len(parts) == 1 and isinstance(parts[0], _EnvironmentText):
            return str(parts[0])
        return native_concat(parts)


class _DbtNativeTemplate(NativeTemplate):
    environment_class = _DbtNativeEnvironment


_DbtNativeEnvironment.template_class = _DbtNativeTemplate


def preflight_values(given: dict[str, Any], environ: dict[str, str]) -> dict[str, Any]:
    """What the preflight hook will read: dbt_project.yml's `loft` settings rendered as dbt renders
    them (native types), with these vars and this environment."""
    project = yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text(encoding="utf-8"))
    env = _DbtNativeEnvironment()
    env.globals.update(
        var=lambda name, default=None: given.get(name, default),
        env_var=lambda name, default: _EnvironmentText(environ.get(name, default)),
    )
    return {name: env.from_string(text).render() for name, text in project["models"]["loft"]["+loft"].items()}


def environment_from(caller: Path, environ: dict[str, str]) -> dict[str, str]:
    """The environment for dbt in the project folder: relative LOFT_* paths read from the caller's folder."""
    resolved = dict(environ)
    for name, value in environ.items():
        if name.startswith("LOFT_") and name.endswith(PATH_SUFFIXES) and value and not Path(value).is_absolute():
            resolved[name] = str((caller / value).resolve())
    return resolved


def command(args: argparse.Namespace) -> int:
    """Check the selection and settings, then run `dbt build` with the same arguments."""
    return run_build(list(args.unknown_arguments))


def run_build(arguments: list[str]) -> int:
    """`dbt build ARGUMENTS` as `loft build` runs it (settings checked first, dbt in the project
    folder, a Ctrl-C said in one line); dbt's exit code, or 130 after a Ctrl-C."""
    environ = environment_from(Path.cwd(), dict(os.environ))
    warehouse = warehouse_path(environ.get("LOFT_DUCKDB_PATH"))
    try:
        dbt_args = checked_arguments(arguments, environ)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{exc} (nothing was built; {warehouse} is as it was)") from exc
    executable = str(Path(sys.executable).with_name("dbt"))
    folders = [] if "--project-dir" in dbt_args else ["--project-dir", str(PROJECT_ROOT)]
    folders += [] if "--profiles-dir" in dbt_args else ["--profiles-dir", str(PROJECT_ROOT)]
    dbt_args, selection = runtime_selection(dbt_args)
    (PROJECT_ROOT / "target").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="loft_build_", dir=PROJECT_ROOT / "target") as folder:
        selection_file, results_file = Path(folder) / "selection.json", Path(folder) / "results.txt"
        selection_file.write_text(json.dumps(selection), encoding="utf-8")
        environ = {
            **environ,
            current_build.RUNTIME_FILE_ENV: str(selection_file),
            current_build.RESULTS_FILE_ENV: str(results_file),
            current_build.SETTINGS_CHECKED_ENV: "1",
            interrupts.STOP_FILE_ENV: str(Path(folder) / "stop"),
        }
        started = time.time()
        code, interrupted = _run_dbt([executable, "build", *dbt_args, *folders], environ)
        results = current_build.held_results(results_file)
    if not interrupted:
        failure = first_failure(_target_path(dbt_args) / "run_results.json", started) if code else None
        print(results + outcome("loft build", code, warehouse, environ, failure))
        return code
    print(
        f"loft build: interrupted; nothing of this build was published ({warehouse} "
        "holds the last good build); rerun the same command to resume without paying twice for stored responses",
        file=sys.stderr,
    )
    return 130


def outcome(command: str, code: int, warehouse: Path, environ: Mapping[str, str], failure: str | None = None) -> str:
    """The line a build ends with, after its results table: whether it passed (else the first
    node that failed and why) and what the warehouse file now holds."""
    in_place = working_file(warehouse, environ) == warehouse
    if code == 0:
        return f"{command}: passed; {'built in place in' if in_place else 'published'} {warehouse}"
    failed = f"{command}: failed (dbt exit {code}{f'; {failure}' if failure else ''})"
    if in_place:
        return f"{failed}; built in place: {warehouse} may mix two builds' tables"
    return f"{failed}; nothing published, {warehouse} holds the last good build"


def first_failure(run_results: Path, since: float) -> str | None:
    """`node: the last line of its message` of the first node that failed, from dbt's
    run_results.json when this run wrote it (dbt puts the reason on the message's last line)."""
    try:
        if run_results.stat().st_mtime < since:
            return None
        document = json.loads(run_results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for result in document.get("results", []):
        if result.get("status") in ("error", "fail", "runtime error"):
            lines = [line.strip() for line in str(result.get("message") or "").splitlines() if line.strip()]
            node = str(result.get("unique_id", "")).rsplit(".", 1)[-1]
            return f"{node}: {lines[-1]}" if lines else node
    return None


def _target_path(dbt_args: list[str]) -> Path:
    """Where dbt writes run_results.json: --target-path (read from the project folder, where dbt
    runs), else the project's target/."""
    for position, argument in enumerate(dbt_args):
        if argument.startswith("--target-path="):
            return PROJECT_ROOT / argument.split("=", 1)[1]
        if argument == "--target-path" and position + 1 < len(dbt_args):
            return PROJECT_ROOT / dbt_args[position + 1]
    return PROJECT_ROOT / "target"


def checked_arguments(dbt_args: list[str], environ: dict[str, str]) -> list[str]:
    """dbt's arguments once the sizes they select and the settings hold (a relative data_dir
    var made absolute); ConfigurationError names the first that does not."""
    parsed = argparse.ArgumentParser(add_help=False)
    parsed.add_argument("--select", "-s", nargs="+", default=[])
    parsed.add_argument("--vars", default=None)
    known, _ = parsed.parse_known_args(dbt_args)
    given = build_vars(known.vars)
    preflight.check_vars(given)
    sizes = selected_sizes(known.select)
    values = preflight_values(given, environ)
    if values["data_dir"] and not Path(str(values["data_dir"])).is_absolute():
        values["data_dir"] = str((Path.cwd() / str(values["data_dir"])).resolve())
        dbt_args = _with_var(dbt_args, known.vars, "data_dir", values["data_dir"])
    previous = os.environ.copy()
    os.environ.update(environ)
    try:
        preflight.check(values, sizes)
    finally:
        os.environ.clear()
        os.environ.update(previous)
    refuse_a_second_writer(working_file(warehouse_path(environ.get("LOFT_DUCKDB_PATH")), environ))
    return dbt_args


def runtime_selection(dbt_args: list[str]) -> tuple[list[str], dict[str, Any]]:
    """dbt's arguments without the selection's --vars keys (current_build.RUNTIME_SETTINGS), and
    those keys: the models read them at run time, so a change of selection costs dbt no new parse."""
    parsed = argparse.ArgumentParser(add_help=False)
    parsed.add_argument("--vars", default=None)
    known, _ = parsed.parse_known_args(dbt_args)
    given = build_vars(known.vars)
    selection = {name: value for name, value in given.items() if name in current_build.RUNTIME_SETTINGS}
    rest = {name: value for name, value in given.items() if name not in selection}
    if known.vars is None or not selection:
        return dbt_args, selection
    joined = f"--vars={known.vars}"
    if joined in dbt_args:
        position = dbt_args.index(joined)
        before, after = dbt_args[:position], dbt_args[position + 1 :]
    else:
        position = dbt_args.index(known.vars)
        before, after = dbt_args[: position - 1], dbt_args[position + 1 :]
    if rest:
        return [*before, "--vars", yaml.safe_dump(rest, default_flow_style=True).strip(), *after], selection
    return [*before, *after], selection


def _run_dbt(argv: list[str], environ: dict[str, str]) -> tuple[int, bool]:
    """Run dbt in the project folder, its output passed through; after a Ctrl-C, dbt's own
    report of it (a traceback of its thread pool) is left out but for its summary line.
    Returns dbt's exit code and whether the run was interrupted.

    The output is read in a thread and the main thread waits in short steps: a library loaded
    here re-installs the SIGINT handler with SA_RESTART (interrupts.py), so a main thread blocked
    reading a quiet dbt would not see a Ctrl-C until dbt printed its next line."""
    process = subprocess.Popen(
        argv, cwd=PROJECT_ROOT, env=environ, stdout=subprocess.PIPE, text=True, bufsize=1, preexec_fn=_end_with_parent
    )
    interrupted = threading.Event()
    pump = threading.Thread(target=_pass_through, args=(process, interrupted), name="dbt-output", daemon=True)
    pump.start()
    while pump.is_alive():
        try:
            pump.join(interrupts.POLL_S)
        except KeyboardInterrupt:
            interrupted.set()
            stop_file = environ.get(interrupts.STOP_FILE_ENV)
            if stop_file:  # dbt's models stop on it whether or not dbt saw the Ctrl-C (interrupts.py)
                Path(stop_file).touch()
    return process.wait(), interrupted.is_set()


def _pass_through(process: subprocess.Popen[str], interrupted: threading.Event) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        if DBT_INTERRUPTED in line:
            interrupted.set()
        if not interrupted.is_set() or DBT_SUMMARY in line:
            sys.stdout.write(line)
            sys.stdout.flush()


def _end_with_parent() -> None:
    """In dbt's process before it starts: a SIGTERM when `loft build` dies, even by SIGKILL, so a
    killed build leaves no dbt behind still writing (its working copy is never published)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _with_var(dbt_args: list[str], given: str | None, name: str, value: str) -> list[str]:
    """dbt's arguments with one var replaced (a relative data_dir made absolute)."""
    values = {**build_vars(given), name: value}
    text = yaml.safe_dump(values, default_flow_style=True).strip()
    if given is None:
        return [*dbt_args, "--vars", text]
    position = dbt_args.index(given)
    return [*dbt_args[:position], text, *dbt_args[position + 1 :]]


def register(subparsers: Any) -> None:
    """Add the `build` subcommand."""
    parser = subparsers.add_parser(
        "build",
        help="dbt build from any folder, sizes and settings checked before dbt parses the project",
        description=__doc__,
        usage="loft build [dbt build's arguments, e.g. --select loft_128k --vars '{limit: 3}']",
    )
    parser.set_defaults(func=command, passes_unknown_arguments=True)
