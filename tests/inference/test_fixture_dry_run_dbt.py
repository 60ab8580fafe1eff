"""docs/systems-and-costs.md's dry run (`run: fixture-dry-run`), as written but for the port (any
free one) and the warehouse and store (the test's own): `loft fixture-server` in the background,
then the build with the dry-run keys pointed at it, where every default API system answers
ArguAna's first three 32k queries from the fixture."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from loft_warehouse.inference.systems import load_systems
from tests import docs_commands
from tests.conftest import query, run_dbt

pytestmark = pytest.mark.slow
DOCUMENTED_PORT = "8765"


def test_the_documented_dry_run_answers_every_default_system(tmp_path: Path, shared_data: Path) -> None:
    serve, build = docs_commands.invocations("fixture-dry-run")
    assert (Path(serve.program).name, serve.args[-1]) == ("loft", "&")
    serve_args = [("0" if word == DOCUMENTED_PORT else word) for word in serve.args[:-1]]
    loft = str(Path(sys.executable).with_name("loft"))
    with subprocess.Popen([loft, *serve_args], stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            port = re.search(r"http://127\.0\.0\.1:(\d+)", server.stdout.readline())
            assert port, "the fixture server did not say where it serves"
            env = {name: value.replace(DOCUMENTED_PORT, port.group(1)) for name, value in build.env.items()}
            del env["LOFT_DUCKDB_PATH"]
            env["LOFT_RESPONSE_STORE"] = str(tmp_path / "store.sqlite")
            result = run_dbt(build.args, tmp_path / "dry-run.duckdb", env)
        finally:
            server.terminate()
    assert result.returncode == 0, result.stdout[-5000:]
    defaults = sorted(name for name, system in load_systems().items() if system.default)
    rows = query(
        tmp_path / "dry-run.duckdb",
        "select system, status, query_limit, count(*), count(*) filter (where raw_text <> '') "
        "from loft_32k.responses where dataset = 'arguana' group by all order by system",
    )
    # ArguAna's 32k release has dev queries only: the first three of them, answered by each system
    assert rows == [(name, "ok", 3, 3, 3) for name in defaults]
    assert len(defaults) == 5
