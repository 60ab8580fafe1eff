"""Credentials in an endpoint URL (`http://user:secret@host`, sent by the HTTP client as Basic
auth) never reach a stored error, however the server echoes them (issue 60 item 6)."""

from __future__ import annotations

import base64
import http.server
import json
import sqlite3
import threading

from loft_warehouse.inference import runner
from loft_warehouse.inference.store import ResponseStore
from tests.inference.support import inputs, make_prompts, openai_system, systems_from

PASSWORD = "pw-5ecr3t-77"
USER = "alice"


class _Echo(http.server.BaseHTTPRequestHandler):
    """Refuses every request, echoing its Authorization header and what it decodes to."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("content-length") or 0))
        auth = self.headers.get("authorization") or ""
        decoded = base64.b64decode(auth.split(" ", 1)[-1]).decode(errors="replace") if auth.startswith("Basic") else ""
        body = json.dumps({"error": {"message": f"denied: {auth} ({decoded}) http://{decoded}@host{self.path}"}})
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *_: object) -> None:
        pass


def test_endpoint_credentials_echoed_by_a_server_are_masked_in_the_stored_error(tmp_path, monkeypatch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("LOFT_TEST_OPENAI_KEY", "sk-echo-key-123")
        monkeypatch.setenv(
            "LOFT_TEST_OPENAI_BASE_URL", f"http://{USER}:{PASSWORD}@127.0.0.1:{server.server_address[1]}/v1"
        )
        systems = systems_from(tmp_path, [openai_system(max_attempts=1, stream=False)])
        with ResponseStore(tmp_path / "store.sqlite") as store:
            frame = runner.run(inputs(make_prompts(1, 0)), systems, store, "128k", {}, emit=lambda line: None)
    finally:
        server.shutdown()
        server.server_close()
    error = frame.row(0, named=True)["error"]
    assert error.startswith("HTTP 400") and "denied" in error and "***" in error
    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    with sqlite3.connect(tmp_path / "store.sqlite") as con:
        tables = [name for (name,) in con.execute("select name from sqlite_master where type = 'table'")]
        stored = "\n".join(str(row) for table in tables for row in con.execute(f"select * from {table}"))
    for secret in (PASSWORD, basic, "sk-echo-key-123"):
        assert secret not in error and secret not in stored
