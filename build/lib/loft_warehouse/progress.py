"""Progress lines of long steps (staging, gold SQL checks, inference): done / total, rate, ETA,
and for inference errors and cost so far."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable


def emit_stderr(line: str) -> None:
    """Default sink for progress and warning lines."""
    print(line, file=sys.stderr, flush=True)


def _duration(seconds: float) -> str:
    whole = int(round(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


class Progress:
    """done / total, rate, ETA, errors and cost so far: a tqdm bar when the lines go to a
    terminal, else a line every `interval_s` (build logs), even while a long call is still
    out, and one at the end."""

    def __init__(
        self,
        label: str,
        total: int,
        emit: Callable[[str], None] = emit_stderr,
        interval_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "req",
        costs: bool = True,
        heartbeat: bool = True,
    ) -> None:
        self.label = label
        self.total = total
        self.emit = emit
        self.interval_s = interval_s
        self.clock = clock
        self.unit = unit
        self.costs = costs
        self.started = clock()
        self._last = self.started
        self.done = 0
        self.errors = 0
        self.cost_usd = 0.0
        self._lock = threading.Lock()
        self._bar = None
        if emit is emit_stderr and sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=label, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False)
        self._finished = threading.Event()
        if heartbeat:
            threading.Thread(target=self._beat, name="loft-progress", daemon=True).start()

    def _beat(self) -> None:
        """Between answers too: redraw the bar, or print a line once `interval_s` has passed."""
        while not self._finished.wait(min(self.interval_s, 1.0)):
            with self._lock:
                if self._bar is not None:
                    self._bar.refresh()
                    continue
                now = self.clock()
                if now - self._last < self.interval_s:
                    continue
                self._last = now
            self.emit(self.line())

    def line(self) -> str:
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = self.done / elapsed
        left = self.total - self.done
        eta = "done" if left <= 0 else (f"ETA {_duration(left / rate)}" if rate > 0 else "ETA unknown")
        parts = [f"{self.label}: {self.done}/{self.total} done", f"{rate:.2f} {self.unit}/s", eta]
        if self.costs:
            parts += [f"{self.errors} error(s)", f"cost so far ${self.cost_usd:,.4f}"]
        return ", ".join(parts)

    def tick(self, status: str = "ok", cost_usd: float | None = None) -> None:
        with self._lock:
            self.done += 1
            self.errors += status == "error"
            self.cost_usd += cost_usd or 0.0
            if self._bar is not None:
                self._bar.update(1)
                if self.costs:
                    self._bar.set_postfix_str(f"{self.errors} err, ${self.cost_usd:,.4f}", refresh=False)
                return
            now = self.clock()
            if now - self._last >= self.interval_s and self.done < self.total:
                self._last = now
                self.emit(self.line())

    def finish(self) -> None:
        self._finished.set()
        if self._bar is not None:
            self._bar.close()
        self.emit(self.line())
