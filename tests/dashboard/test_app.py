"""Issue 11: every dashboard page renders from a built warehouse (streamlit.testing.v1.AppTest)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from loft_warehouse.dashboard.serve import APP
from loft_warehouse.dashboard.views import PAGES, _run_label, as_text


def _app(database: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("LOFT_DUCKDB_PATH", str(database))
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    assert not app.exception, [e.message for e in app.exception]
    return app


def _page(app: AppTest, name: str) -> AppTest:
    app.sidebar.radio(key="page").set_value(name).run()
    assert not app.exception, [e.message for e in app.exception]
    return app


def _frames(app: AppTest) -> list:
    return [element.value for element in app.dataframe]


def test_every_page_renders_with_real_numbers(dashboard_warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(dashboard_warehouse, monkeypatch)
    seen = {}
    for name in PAGES:
        _page(app, name)
        seen[name] = ([h.value for h in app.header], len(app.get("plotly_chart")), app)
        assert seen[name][0], f"{name}: no header"

    _page(app, "Leaderboard")
    board = _frames(app)[0]
    assert {"bm25", "GPT-4o"} <= set(board["system"])
    ours = board[(board["system"] == "bm25") & (board["rank_group"] == "warehouse")]
    assert len(ours) and ours["value"].between(0, 1).all() and ours["ci_low"].notna().all()
    assert len(app.get("plotly_chart")) >= 1

    _page(app, "Table 2 grid")
    grid = _frames(app)[0]
    assert {"paper: GPT-4o", "paper: Gemini 1.5 Pro", "bm25"} <= set(grid.columns)
    assert grid.loc[grid["row_name"] == "retrieval/arguana: recall@1", "bm25"].between(0, 1).all()
    assert len(app.get("plotly_chart")) == 1

    app.sidebar.multiselect(key="filter-system").set_value(["imported-run"]).run()
    _page(app, "Leaderboard")
    board = _frames(app)[0]
    assert set(board[board["source"] != "paper"]["system"]) == {"imported-run"}
    assert any("of other systems" in str(c.value) for c in app.caption)
    app.sidebar.multiselect(key="filter-system").set_value([]).run()

    _page(app, "Query drill-down")
    app.selectbox(key="drill-dataset").set_value("retrieval/arguana").run()
    texts = [block.value for block in app.code]
    assert any("Final Answer" in text for text in texts)  # bm25's raw response
    assert any("ID:" in text for text in texts)  # the prompt head shows the corpus
    assert _frames(app)[0]["metric_name"].str.startswith("recall").any()
    assert not app.get("image")
    app.selectbox(key="drill-dataset").set_value("mm/oven").run()
    texts = [block.value for block in app.code]
    assert any("ID: 0 | TITLE: Shape 0\n[image/jpeg " in text for text in texts)  # media parts named in order
    assert len(app.get("image")) == 1  # the query's image, as sent
    assert '["oven-002"]' in texts  # its gold
    assert _frames(app)[0]["metric_name"].str.startswith("recall").any()

    _page(app, "Position curves")
    assert len(app.get("plotly_chart")) == 1
    assert set(_frames(app)[0]["experiment"]) == {"loft_gold_depth"}

    _page(app, "Heatmaps")
    assert len(app.get("plotly_chart")) >= 2  # bm25 and the import

    _page(app, "Paired comparison")
    values = {m.label: m.value for m in app.metric}
    assert set(values) == {"mean a", "mean b", "b - a"}
    assert any("McNemar exact p" in str(md.value) for md in app.markdown)

    _page(app, "Cost")
    assert "bm25" in set(_frames(app)[0]["system"])

    _page(app, "Run status")
    status = _frames(app)[0]
    assert "ok" in set(status["status"])


def test_an_unbuilt_warehouse_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(tmp_path / "none.duckdb", monkeypatch)
    assert any("make build" in w.value for w in app.warning)


def test_what_an_analyst_opens_is_honest(dashboard_warehouse: Path, tmp_path: Path) -> None:
    """The misleading cases of issue 11, on the published file, from another working directory."""
    import subprocess
    import sys

    script = (
        "import duckdb, sys\n"
        f"con = duckdb.connect({str(dashboard_warehouse)!r}, read_only=True)\n"
        "print(con.sql('select count(*) from loft_32k.leaderboard').fetchone()[0])\n"
    )
    elsewhere = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert elsewhere.returncode == 0 and int(elsewhere.stdout) > 0, elsewhere.stderr

    import duckdb

    with duckdb.connect(str(dashboard_warehouse), read_only=True) as con:
        tables = {
            name
            for (name,) in con.sql("select table_name from duckdb_tables() where schema_name = 'loft_32k'").fetchall()
        }
        assert tables and not [t for t in tables if t.startswith(("stg_", "int_"))]
        internal = con.sql("select count(*) from duckdb_tables() where schema_name = 'loft_32k_internal'").fetchone()[0]
        assert internal > 0
        missing = con.sql(
            "select table_name, column_name from duckdb_columns() where schema_name = 'loft_32k' "
            "and table_name in ('metrics', 'leaderboard', 'scores') and comment is null"
        ).fetchall()
        assert missing == []
        assert con.sql(
            "select comment from duckdb_tables() where table_name = 'metrics' and schema_name = 'loft_32k'"
        ).fetchone()[0]
        skipped = con.sql(
            "select count(*), count(mean), count(ci_low) from loft_32k.metrics where system = 'gpt-4o'"
        ).fetchone()
        assert skipped[0] > 0 and skipped[1:] == (0, 0)  # never ran: no score, no interval
        ranks = con.sql(
            "select rank_group, min(rank) from loft_32k.leaderboard where dataset = 'arguana' group by 1 order by 1"
        ).fetchall()
        assert ranks == [("paper", 1), ("warehouse", 1)]
        columns = "select column_name from duckdb_columns() where schema_name = 'loft_32k' and table_name = ?"
        wide = [c for (c,) in con.execute(columns, ["leaderboard_wide"]).fetchall()]
        assert "paper: GPT-4o" in wide


def test_loft_dashboard_serves_and_a_kill_leaves_no_server(dashboard_warehouse: Path, tmp_path: Path) -> None:
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    loft = str(Path(sys.executable).with_name("loft"))
    command = [loft, "dashboard", "--port", str(port), "--database", str(dashboard_warehouse)]
    server = subprocess.Popen(command, env={**os.environ, "HOME": str(tmp_path)}, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as reply:
                    assert reply.status == 200
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("loft dashboard did not answer")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "a server still listens after loft dashboard was stopped"


@pytest.mark.parametrize(
    ("source", "system", "method", "label"),
    [
        ("paper", "GPT-4o", None, "paper: GPT-4o"),
        ("bm25", "bm25", "cic", "bm25"),
        ("import", "mine", "cic", "import: mine"),
        ("dry_run", "gpt-4o", "icr", "dry run: gpt-4o icr"),
        ("api", "gpt-4o", "cic", "gpt-4o"),
    ],
)
def test_a_run_label_says_where_its_answers_came_from(source: str, system: str, method: str | None, label: str) -> None:
    row = SimpleNamespace(source=source, system=system, method=method)
    assert _run_label(row) == label


@pytest.mark.parametrize(
    "hostile",
    [
        "![x](http://203.0.113.9/beacon.png)",
        "[click](javascript:alert(1))",
        '<img src="http://203.0.113.9/p.png" onerror="alert(1)">',
        "http://203.0.113.9/autolink **bold** `code` :red[colour] &amp;",
    ],
)
def test_text_from_the_warehouse_renders_as_written_never_as_markup(hostile: str) -> None:
    """A qid, system or variant is shown in markdown (subheaders, captions) as literal text."""
    import html
    import re

    import mistune

    rendered = mistune.create_markdown(escape=False)(as_text(hostile))
    assert "<img" not in rendered and "<a " not in rendered and "<strong" not in rendered and "<code" not in rendered
    assert html.unescape(re.sub(r"</?p>", "", rendered)).strip() == hostile
