"""Ctrl-C that stops a run within seconds, although dbt runs models in its worker threads.

A Python model runs in a dbt worker thread. On Ctrl-C only the main thread can run Python's
handler, and in a dbt process it does not even wake up: it waits for the running model (a
native library there re-installs the SIGINT handler with SA_RESTART, so the wait is resumed),
so a model blocked in a long local prefill or a slow API call kept a run alive for minutes.
The C-level handler still writes the signal number to Python's wakeup fd the moment it runs, so
`listen()` sets that fd from the main thread (scheduled there with Py_AddPendingCall when called
elsewhere) and a watcher thread reading the other end sets STOP. The runner's workers, its retry
backoff and the local provider's prefill check STOP between steps and stop with `Interrupted`,
whose message says how to resume; every response already returned is in the durable store by then.
Only `arm()`, as a dbt invocation starts (the dbt plugin), forgets an earlier Ctrl-C: a model's
run merely listens, so one started beside or after the Ctrl-C stops as well (clearing STOP per
model once let a model starting a moment later undo the stop of one already waiting on a call).

dbt opens its connections, and so arms this, in a worker thread; the pending call then waits for
the main thread to run Python, which it may not do before the Ctrl-C (dbt's main thread sleeps
in a lock while the first models run), so the wakeup fd can be missing when it is needed. Under
`loft build` that does not matter: its own process takes the Ctrl-C and creates the file named by
$LOFT_STOP_FILE, which a second watcher polls (every POLL_S seconds) and answers with STOP.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time
from pathlib import Path

STOP = threading.Event()
RESUME = "rerun the same command to resume: stored responses are not sent again"
STOP_FILE_ENV = "LOFT_STOP_FILE"
POLL_S = 0.2
_PENDING_CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
_armed = threading.Lock()
_state: dict[str, object] = {}


class Interrupted(RuntimeError):
    """The run was asked to stop (Ctrl-C)."""


def check(what: str) -> None:
    """Raise Interrupted when a stop was asked for (`what` names the step being stopped)."""
    if STOP.is_set():
        raise Interrupted(f"interrupted during {what}; {RESUME}")


def _watch(read_end: int) -> None:
    while received := os.read(read_end, 64):
        if signal.SIGINT in received:
            STOP.set()


def _poll(stop_file: Path) -> None:
    while True:
        if stop_file.exists():
            STOP.set()
        time.sleep(POLL_S)


def _set_wakeup_fd(write_end: int) -> bool:
    """In the main thread: route signals to write_end, unless another wakeup fd is set."""
    previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    if previous != -1:
        signal.set_wakeup_fd(previous)
        return False
    return True


def arm() -> None:
    """A new run in this process (a dbt invocation): forget an earlier Ctrl-C, then listen."""
    STOP.clear()
    listen()


def listen() -> None:
    """Make a Ctrl-C set STOP, keeping one already received; the fd and the watcher are set up
    once per process, from any thread."""
    with _armed:
        if "pipe" in _state:
            return
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        _state["pipe"] = (read_end, write_end)
    threading.Thread(target=_watch, args=(read_end,), name="loft-ctrl-c", daemon=True).start()
    stop_file = os.environ.get(STOP_FILE_ENV, "").strip()
    if stop_file:
        threading.Thread(target=_poll, args=(Path(stop_file),), name="loft-stop-file", daemon=True).start()
    if threading.current_thread() is threading.main_thread():
        _set_wakeup_fd(write_end)
        return

    def in_main_thread(_: int | None) -> int:
        _set_wakeup_fd(write_end)
        return 0

    callback = _PENDING_CALL(in_main_thread)
    _state["callback"] = callback  # ctypes callbacks must outlive the call
    ctypes.pythonapi.Py_AddPendingCall(callback, None)
