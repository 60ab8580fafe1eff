"""Issue 11: the dashboard in a real browser (Playwright driving Debian's chromium, no download):
every page renders its key elements with real numbers, no request leaves 127.0.0.1, a
screenshot per page lands in the test's tmp dir, and a build runs while the dashboard is open.
The drill-down shows a multimodal query's image as the model received it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from loft_warehouse.dashboard.serve import command
from loft_warehouse.dashboard.views import PAGES
from loft_warehouse.settings import PROJECT_ROOT
from tests.conftest import DBT
from tests.dashboard.conftest import SETTINGS, build_env

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# What each page must show once rendered (text), besides its header.
EXPECTED = {
    "Leaderboard": "paper: GPT-4o",
    "Table 2 grid": "Colour by the difference from",
    "Query drill-down": "Final Answer",
    "Position curves": "points, each a mean with its 95% interval",
    "Heatmaps": "imported-run",
    "Paired comparison": "McNemar exact p",
    "Cost": "bm25",
    "Run status": "Errors and blocks",
}

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason="no chromium installed (.ci/run installs it)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dashboard(dashboard_warehouse: Path, tmp_path: Path):
    port = _free_port()
    env = {**os.environ, "LOFT_DUCKDB_PATH": str(dashboard_warehouse), "HOME": str(tmp_path)}
    log = (tmp_path / "streamlit.log").open("w")
    server = subprocess.Popen(command(port), env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        server.kill()
        pytest.fail("the dashboard did not start: " + (tmp_path / "streamlit.log").read_text()[-2000:])
    yield url
    server.terminate()
    server.wait(timeout=30)
    log.close()


def test_each_page_in_chromium_offline_with_a_build_running(dashboard: str, dashboard_warehouse: Path, tmp_path):
    from playwright.sync_api import sync_playwright

    requested: list[str] = []
    left: list[str] = []

    def watch(route) -> None:
        url = route.request.url
        requested.append(url)
        if urlsplit(url).hostname not in ("127.0.0.1", "localhost") and not url.startswith(("data:", "blob:")):
            left.append(url)
            route.abort()
        else:
            route.continue_()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.route("**/*", watch)
        page.goto(dashboard)
        page.get_by_text("LOFT warehouse").first.wait_for(timeout=90_000)
        built = {}

        def start_build() -> subprocess.Popen:
            env = {
                **os.environ,
                "LOFT_DUCKDB_PATH": str(dashboard_warehouse),
                "LOFT_BUILD_IN_PLACE": "",
                **build_env(dashboard_warehouse.parent),
            }
            return subprocess.Popen(
                [DBT, "build", "--select", "loft_32k", "--vars", SETTINGS, "--target-path", str(tmp_path / "target")],
                cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip

        running = start_build()
        for index, name in enumerate(PAGES):
            page.get_by_text(name, exact=True).first.click()
            page.locator(f"text={EXPECTED[name]} >> visible=true").first.wait_for(timeout=90_000)
            if name in ("Leaderboard", "Table 2 grid", "Position curves", "Cost", "Run status", "Heatmaps"):
                page.locator(".js-plotly-plot").first.wait_for(timeout=90_000)
            if name == "Query drill-down":  # the first dataset is the multimodal one: its query's image
                image = page.locator("[data-testid='stImage'] img").first
                image.wait_for(timeout=90_000)
                page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
                drawn = image.evaluate("img => [img.naturalWidth, img.naturalHeight]")
            time.sleep(1)
            page.screenshot(path=str(tmp_path / f"{index + 1}-{name.lower().replace(' ', '-')}.png"), full_page=True)
            built[name] = page.inner_text("body")
        page.get_by_text("Leaderboard", exact=True).first.click()
        page.get_by_text("paper: GPT-4o").first.wait_for(timeout=90_000)
        system_filter = page.locator(".stMultiSelect").filter(has_text="System").first
        system_filter.click()
        page.keyboard.type("imported-run")
        page.keyboard.press("Enter")
        page.locator("text=of other systems >> visible=true").first.wait_for(timeout=90_000)
        time.sleep(1)
        page.screenshot(path=str(tmp_path / "9-leaderboard-filtered.png"), full_page=True)
        filtered = page.inner_text("body")
        output = running.communicate(timeout=900)[0]
        assert running.returncode == 0, output[-3000:]
        assert "published" in output
        page.reload()
        page.get_by_text("LOFT warehouse").first.wait_for(timeout=90_000)
        browser.close()

    assert left == [], f"requests left 127.0.0.1: {left[:5]}"
    assert requested
    board = built["Leaderboard"]
    assert "bm25" in board and "0.8" in board
    assert "not compared" not in built["Paired comparison"]
    drill = built["Query drill-down"]
    assert "Query media (mm/oven dev-2, as sent)" in drill and drawn == [512, 512]  # LOFT sends images at 512x512
    assert 'Gold\n\n["oven-002"]' in drill
    grid = built["Table 2 grid"]
    assert "paper: Gemini 1.5 Pro" in grid and "retrieval/arguana: recall@1" in grid
    assert "Hidden by the sidebar's filters" in filtered and "imported-run" in filtered
    shots = sorted(p.name for p in tmp_path.glob("*.png"))
    assert len(shots) == len(PAGES) + 1
    print("screenshots:", *(str(tmp_path / s) for s in shots), sep="\n  ")
