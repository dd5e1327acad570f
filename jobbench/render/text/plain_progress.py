"""Sparse plain progress lines for logs and CI (no TTY, or CI=true): no rich, no redraws."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from jobbench.render.text.arrivals import pacing_line, steady_line


class _Rep(threading.local):
    """The rep a thread is telling of: rows in lanes (core/run/lanes.py) run reps at once."""

    scenario = ""
    started = 0.0
    next_mark = 0.5


class PlainProgress:
    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self._rep = _Rep()
        self._lock = threading.Lock()  # a line whole, whichever lane says it

    def _say(self, text: str) -> None:
        if not self.quiet:
            with self._lock:
                print(text, file=self.stream, flush=True)

    def message(self, text: str) -> None:
        self._say(text)

    def rep_started(self, scenario: str, rep: int, reps: int, burst: int) -> None:
        self._rep.scenario, self._rep.started, self._rep.next_mark = scenario, time.monotonic(), 0.5
        self._say(f"{scenario}: rep {rep}/{reps}, {burst} jobs")

    def steps_started(self, title: str, total: int) -> None:
        """Counted steps that are no rep's jobs (a sweep's cells), then told by rep_progress."""
        self._rep.scenario, self._rep.started, self._rep.next_mark = "", time.monotonic(), 0.5

    def steps_finished(self) -> None:
        pass

    def rep_progress(self, done: int, total: int) -> None:
        rep = self._rep
        if total and done / total >= rep.next_mark and done < total:
            where = f"{rep.scenario}: " if rep.scenario else ""  # lanes interleave lines
            self._say(f"  {where}{done}/{total} done, {time.monotonic() - rep.started:.1f} s")
            rep.next_mark += 0.5

    def rep_finished(self, scenario: str, rep: int, figures: dict[str, Any]) -> None:
        p99 = figures.get("time_to_p99_s")
        eff = figures.get("efficiency")
        text = f"  {scenario} rep {rep} done" + (
            f": time to 99 % {p99:.3f} s" if p99 is not None else ""
        )
        if eff is not None:
            text += f", efficiency {eff:.1%}"
        self._say(text)
        for line in (pacing_line(figures), steady_line(figures)):
            if line is not None:
                self._say(f"  {line}")
