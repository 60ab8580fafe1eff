"""How long each dashboard page takes to draw in a real browser (chromium through Playwright),
from the click in the sidebar to its first chart (or metric, code block, or the note that it
has nothing to draw).

    .venv/bin/python benchmarks/dashboard_render.py --database loft.duckdb --rounds 3

Prints, per page, each round's seconds and the median. Needs chromium (`.ci/run` installs it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from loft_warehouse.dashboard.serve import command
from loft_warehouse.dashboard.views import PAGES

# Each page's header (its first words), then what marks it as drawn: its first chart's SVG,
# metric or code block, or the note that it has nothing to draw, once no element is stale.
HEADERS = {
    "Leaderboard": "Leaderboard (",
    "Table 2 grid": "The paper's Table 2",
    "Query drill-down": "One query: prompt",
    "Position curves": "Accuracy by where the gold sits",
    "Heatmaps": "Context length x dataset",
    "Paired comparison": "Paired comparison of two runs",
    "Cost": "Cost ledger",
    "Run status": "Run status: responses",
}
DRAWN = ".js-plotly-plot .main-svg, [data-testid='stMetric'], [data-testid='stCode'], [data-testid='stAlert']"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(database: Path, home: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {**os.environ, "LOFT_DUCKDB_PATH": str(database), "HOME": str(home)}
    server = subprocess.Popen(command(port), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                return server, url
        except OSError:
            time.sleep(0.5)
    server.kill()
    sys.exit("the dashboard did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", type=Path, default=Path("loft.duckdb"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {name: [] for name in PAGES}
    with tempfile.TemporaryDirectory() as home:
        server, url = _serve(args.database.resolve(), Path(home))
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(url)
                page.get_by_text("LOFT warehouse").first.wait_for(timeout=120_000)
                for _ in range(args.rounds):
                    for name in PAGES:
                        page.get_by_text("Run status", exact=True).first.click()
                        page.get_by_text("Errors and blocks").first.wait_for(timeout=120_000)
                        started = time.perf_counter()
                        page.get_by_text(name, exact=True).first.click()
                        page.get_by_text(HEADERS[name]).first.wait_for(timeout=120_000)
                        page.wait_for_function(
                            "() => !document.querySelector('[data-stale=\"true\"]')"
                            " && !document.querySelector('[data-testid=\"stStatusWidget\"] button')",
                            timeout=120_000,
                        )
                        page.locator(f"{DRAWN} >> visible=true").first.wait_for(timeout=120_000)
                        times[name].append(time.perf_counter() - started)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"{'page':<20} {'rounds (s)':<28} median")
    for name, seconds in times.items():
        rounds = ", ".join(f"{s:.2f}" for s in seconds)
        print(f"{name:<20} {rounds:<28} {statistics.median(seconds):.2f}")


if __name__ == "__main__":
    main()
