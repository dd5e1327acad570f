"""How a lane (a row run in a thread of its own beside others, core/run/lanes.py) learns that the
run is stopping. Ctrl-C and SIGTERM reach only the main thread, so the main thread sets the
run's stop flag and every lane sees it at its next wait: the waits of a rep's loops go through
`pause`, which in a lane's thread returns early and raises once the flag is set. Elsewhere (no
lanes, or the main thread) `pause` is `time.sleep`. Standard library only."""

from __future__ import annotations

import threading
import time

from jobbench.errors import Interrupted

_LANE = threading.local()  # this thread's run's stop flag, when the thread is a lane

LANE_STOPPED = "stopped: the run is ending (a Ctrl-C, a SIGTERM or another row's failure)"


class LaneStopped(Interrupted):
    """A lane's wait found its run stopping: the lane stops its processes and ends."""


def bind(stop: threading.Event) -> None:
    """This thread is a lane of the run whose stop flag is `stop`."""
    _LANE.stop = stop


def unbind() -> None:
    _LANE.stop = None


def pause(seconds: float) -> None:
    """Sleep `seconds`; in a lane, raise LaneStopped as soon as its run is stopping."""
    stop: threading.Event | None = getattr(_LANE, "stop", None)
    if stop is None:
        time.sleep(seconds)
    elif stop.wait(seconds):
        raise LaneStopped(LANE_STOPPED)


def check() -> None:
    """Raise LaneStopped if this thread is a lane whose run is stopping."""
    stop: threading.Event | None = getattr(_LANE, "stop", None)
    if stop is not None and stop.is_set():
        raise LaneStopped(LANE_STOPPED)
