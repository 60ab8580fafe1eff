"""`loft dashboard`: serve the results dashboard on 127.0.0.1, offline.

Streamlit runs app.py headless, bound to 127.0.0.1, with usage statistics off, so no request
leaves the machine; the warehouse file is $LOFT_DUCKDB_PATH or --database (default loft.duckdb).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from loft_warehouse.dashboard.data import warehouse_path

APP = Path(__file__).with_name("app.py")


def command(port: int, address: str = "127.0.0.1") -> list[str]:
    """The streamlit command line that serves the dashboard."""
    return [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.headless", "true",
        "--server.address", address,
        "--server.port", str(port),
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        "--global.developmentMode", "false",
    ]  # fmt: skip


def _run(args: argparse.Namespace) -> int:
    database = Path(args.database) if args.database else warehouse_path()
    env = {**os.environ, "LOFT_DUCKDB_PATH": str(database.resolve())}
    print(f"dashboard of {database} on http://127.0.0.1:{args.port} (Ctrl-C stops it)", flush=True)
    # Become the server, so that Ctrl-C or a kill reaches Streamlit itself and leaves nothing behind.
    line = command(args.port)
    os.execve(line[0], line, env)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("dashboard", help="serve the results dashboard on 127.0.0.1 (Streamlit)")
    parser.add_argument("--port", type=int, default=8501)
    parser.add_argument("--database", default=None, help="warehouse file (default $LOFT_DUCKDB_PATH or loft.duckdb)")
    parser.set_defaults(func=_run)
