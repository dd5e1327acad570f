"""Lanes: a run's rows side by side. A real worker spends most of a rep asleep (the real SDK's
rows keep the machine 2-11 % busy), so rows that run one after the other leave it idle. With
lanes each row runs in a thread of its own, with its own queues and workers, its sides still
interleaved A, B, A, B within it; the rows' reps overlap and a suite takes about as long as its
longest row (docs/performance.md, "Verdict time").

A lane must not disturb another's measurement, so lanes stay on only while the machine holds
them: a rep during which the machine was over LANES_MAX_BUSY of its CPUs busy, or that the
harness flagged as saturated, turns them off for the rest of the run (the rows then take turns,
one pair at a time, each keeping its processes), and the run says why. Only a target whose every
session has a queue of its own can run lanes, as many as it has room for (Target.lanes_room:
on a Ray cluster, as many rows as its CPUs hold).

Ctrl-C and SIGTERM reach the main thread alone: it sets the run's stop flag, which every lane
sees at its next wait (procs/lane_stop.py), waits for each lane to stop its processes, and
raises as the run loop expects. A row that fails stops the others the same way; its error is
the run's."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from jobbench.core.run.target_seam import Progress
from jobbench.core.scenario.checks import whole_or_auto
from jobbench.procs import lane_stop
from jobbench.procs.signals import interrupts_deferred

AUTO = "auto"  # one lane a row
# A rep during which the whole machine was this busy (a share of all its CPUs) leaves no room for
# another lane: a lane's timers would wait for a CPU. The real SDK's rows, five lanes at once,
# kept a 2-CPU machine at most 35 % busy.
LANES_MAX_BUSY = 0.5
_WAKE_S = 0.2  # how often the main thread looks up from waiting for the lanes


def parse_lanes(text: str) -> int | str:
    """`--lanes auto` or a whole number >= 1 (1: the rows one at a time)."""
    return whole_or_auto("--lanes", text, 1)


def lanes_for(asked: int | str, rows: int, room: int) -> int:
    """The lanes a run gets: `auto` is one a row, as many as its targets have room for
    (Target.lanes_room)."""
    return max(1, min(rows, room, rows if asked == AUTO else int(asked)))


def crowded(figures: Mapping[str, Any]) -> str | None:
    """Why this rep says the machine cannot hold lanes, or None."""
    for anomaly in figures.get("anomalies") or []:
        if anomaly.get("kind") == "saturated":
            return f"the harness was saturated ({anomaly.get('what')})"
    machine = figures.get("machine") or {}
    busy = machine.get("cpu_busy")
    if busy is not None and busy > LANES_MAX_BUSY:
        return (
            f"the machine was {busy:.0%} busy over a rep (lanes need it under {LANES_MAX_BUSY:.0%})"
        )
    return None


@dataclass
class Lanes:
    """The rows running at once: each pair of reps (A then B) runs while this allows it, at
    most `lanes` pairs at a time, one once the machine was seen crowded. `lock` guards what the
    lanes share (the results and their files)."""

    lanes: int = 1
    progress: Progress | None = None
    lock: threading.RLock = field(default_factory=threading.RLock)
    off: str | None = None  # why lanes were turned off
    _running: int = 0  # pairs of reps under way
    _starting: int = 0  # rows starting or waiting to start their processes
    # Whether this thread's row was counted in `_starting` before its lane began (the first
    # wave's rows are, so that none begins a pair while another has yet to start).
    _counted: threading.local = field(default_factory=threading.local)
    _turn: threading.Condition = field(default_factory=threading.Condition)

    @property
    def capacity(self) -> int:
        return 1 if self.off is not None else self.lanes

    @property
    def running(self) -> int:
        """Pairs running now (a rep's figures record it while lanes are on)."""
        return self._running

    @contextlib.contextmanager
    def starting(self) -> Iterator[None]:
        """While a row starts its processes (a queue, workers importing the SDK: a second of a
        core each) no rep runs: a start would be in every running lane's measurement. Rows
        start together; a row that starts later waits for the pairs under way to end."""
        with self._turn:
            if not getattr(self._counted, "yes", False):
                self._starting += 1
            self._counted.yes = True
            while self._running > 0:
                self._turn.wait(_WAKE_S)
                lane_stop.check()
        try:
            yield
        finally:
            self.started()

    def started(self) -> None:
        """This thread's row is no longer starting (its start ended, or it never had one)."""
        if getattr(self._counted, "yes", False):
            self._counted.yes = False
            with self._turn:
                self._starting -= 1
                self._turn.notify_all()

    @contextlib.contextmanager
    def pair(self) -> Iterator[None]:
        """Hold a place for one pair of reps, waiting while the lanes are full or a row starts."""
        self.started()
        with self._turn:
            while self._running >= self.capacity or self._starting > 0:
                self._turn.wait(_WAKE_S)
                lane_stop.check()
            self._running += 1
        try:
            yield
        finally:
            with self._turn:
                self._running -= 1
                self._turn.notify_all()

    def first_wave(self, rows: int) -> None:
        """The rows whose lanes begin at once are starting from now, before their threads run:
        the first to start its processes must not begin a pair while another has yet to. Each
        of those lanes says `counted()` in its thread."""
        with self._turn:
            self._starting += rows

    def counted(self) -> None:
        self._counted.yes = True

    def observe(self, figures: Mapping[str, Any]) -> None:
        """A rep's figures: a crowded machine turns lanes off, once, saying why."""
        if self.lanes < 2 or self.off is not None:
            return
        why = crowded(figures)
        if why is not None:
            self.off = why
            if self.progress is not None:
                self.progress.message(f"lanes off: {why}; the rows take turns, a pair at a time")


def run_rows(count: int, run_row: Callable[[int], None], lanes: Lanes) -> None:
    """Every row, `run_row(index)`: one after the other with one lane, else each in a
    thread of its own, `lanes.lanes` rows at a time (a row's processes run until it ends).
    Returns when every row ended; raises KeyboardInterrupt when the main thread was
    interrupted meanwhile, else the first row's error (by row order) that was not a lane
    stopped by it, every lane having stopped its processes first."""
    if lanes.lanes < 2 or count < 2:
        for index in range(count):
            run_row(index)
        return
    stop = threading.Event()
    wave = min(count, lanes.lanes)  # the pool takes its tasks in order: these begin at once
    lanes.first_wave(wave)

    def lane(index: int) -> None:
        lane_stop.bind(stop)
        if index < wave:
            lanes.counted()
        try:
            lane_stop.check()
            run_row(index)
        finally:
            lanes.started()  # a row that ended before its start ended
            lane_stop.unbind()

    interrupted: BaseException | None = None
    with ThreadPoolExecutor(max_workers=min(count, lanes.lanes), thread_name_prefix="lane") as pool:
        futures: list[Future[None]] = []
        try:
            # Every lane handed out, and its thread known to the pool, before a Ctrl-C lands:
            # one landing inside submit() could leave a thread the pool never joins.
            with interrupts_deferred():
                futures = [pool.submit(lane, index) for index in range(count)]
            pending: set[Future[None]] = set(futures)
            while pending:
                done, pending = wait(pending, timeout=_WAKE_S, return_when=FIRST_EXCEPTION)
                if any(f.exception() is not None for f in done):
                    break
                # These rows may be one lane of a larger run (a trend's commits side by side
                # on a cluster): that run's stop reaches them through this thread.
                lane_stop.check()
        except (KeyboardInterrupt, lane_stop.LaneStopped) as exc:
            interrupted = exc
        finally:
            stop.set()
            with interrupts_deferred(redeliver=interrupted is None):  # every clean-up whole
                wait(futures)
    if interrupted is not None:
        raise interrupted
    errors = [f.exception() for f in futures if f.exception() is not None]
    first = next((e for e in errors if not isinstance(e, lane_stop.LaneStopped)), None)
    if first is not None:
        raise first
    if errors:  # only stopped lanes: the main thread's stop came from a signal it deferred
        raise KeyboardInterrupt
