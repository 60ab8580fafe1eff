"""Progress lines: done / total, rate, ETA, errors and cost, a bar on a terminal, and lines
while a long call is out."""

from __future__ import annotations

import time

from loft_warehouse.progress import Progress
from tests.inference.test_flow import FakeClock


def test_progress_prints_done_rate_eta_and_cost():
    clock = FakeClock()
    lines: list[str] = []
    progress = Progress("inference x", 4, lines.append, interval_s=10, clock=clock, heartbeat=False)
    clock.now = 5
    progress.tick("ok", 0.25)
    clock.now = 10
    progress.tick("error", None)
    progress.finish()
    assert lines == [
        "inference x: 2/4 done, 0.20 req/s, ETA 0:00:10, 1 error(s), cost so far $0.2500",
        "inference x: 2/4 done, 0.20 req/s, ETA 0:00:10, 1 error(s), cost so far $0.2500",
    ]


def test_progress_before_the_first_answer_and_at_the_end():
    clock = FakeClock()
    progress = Progress("SQL gold", 2, lambda line: None, clock=clock, unit="query", costs=False, heartbeat=False)
    clock.now = 3
    assert progress.line() == "SQL gold: 0/2 done, 0.00 query/s, ETA unknown"
    progress.tick()
    progress.tick()
    assert progress.line() == "SQL gold: 2/2 done, 0.67 query/s, done"


def test_progress_draws_a_bar_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    progress = Progress("inference x", 3)
    assert progress._bar is not None
    progress.tick("ok", 0.5)
    progress.finish()
    assert "inference x: 1/3 done" in capsys.readouterr().err


def test_progress_prints_a_line_while_a_long_call_is_out():
    lines: list[str] = []
    progress = Progress("inference x", 2, lines.append, interval_s=0.2)
    time.sleep(0.7)  # no answer yet
    progress.finish()
    assert len(lines) >= 3
    assert lines[0].startswith("inference x: 0/2 done, 0.00 req/s, ETA unknown")
