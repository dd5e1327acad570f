"""SIGTERM handled like Ctrl-C, so commands that own process groups clean them up either way;
and both held back while that cleanup runs, so a second one cannot cut it short."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

_HELD = (signal.SIGINT, signal.SIGTERM)
_holding = False  # signal handlers are process-wide: only the outermost deferral holds


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def interrupts_deferred(*, redeliver: bool = True) -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then deliver them to the handlers that were
    in place (KeyboardInterrupt, usually). They are dropped if the block raises (its exception
    ends things anyway) or with `redeliver=False`, for a caller that is ending anyway. Nested
    deferrals leave it to the outermost."""
    global _holding
    if _holding or threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, _: received.append(signum)) for sig in _HELD}
    _holding = True
    try:
        yield
    finally:
        _holding = False
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for signum in dict.fromkeys(received) if redeliver else ():
        signal.raise_signal(signum)  # its handler runs now: raises, exits or ignores it
