"""The one place jobbench processes install signal handlers (fake_queue, which imports no
jobbench, has its own in fake_queue/http/server.py). Stdlib only and cheap to import: every model
worker imports it.

- `sigterm_as_interrupt`: SIGTERM handled like Ctrl-C (KeyboardInterrupt in the main thread),
  so commands that own process groups clean them up either way, and a process entry point
  (the model worker) ends cleanly on either until its loop installs its own handlers;
  `interrupts_then_exit` is that for a whole CLI command, with both ignored once it is over;
- `interrupts_deferred`: both held back while that cleanup runs, so a second one cannot cut it
  short;
- `call_on_stop_signals`: both call a function instead, and the handlers from before come back
  after; `stop_signals_call` is that for an asyncio program: the function runs in the loop
  (stop taking, stop a burst);
- `handlers_kept`: the handlers before a library call that installs its own (ray.init) come
  back after it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # Ctrl-C, and what stops a process group
_holding = False  # signal handlers are process-wide: only the outermost deferral holds


def _main_thread() -> bool:
    """Only the main thread may install handlers (and only it runs them)."""
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While it lasts, SIGTERM raises KeyboardInterrupt in the main thread, as Ctrl-C does
    (signal.default_int_handler's effect); the handler before comes back after. Elsewhere than
    in the main thread it does nothing."""
    if not _main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def interrupts_then_exit() -> Iterator[None]:
    """For a whole CLI command: SIGTERM raises KeyboardInterrupt as Ctrl-C does while it runs;
    once it is over, either way, both are ignored for the rest of the process, which is only
    exiting: the command has stopped and saved what it had, and a late second signal must
    neither kill that exit (SIGTERM's default: no exit code 130) nor raise in it."""
    if not _main_thread():
        yield
        return
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # signal.default_int_handler's effect, for SIGTERM too


@contextlib.contextmanager
def interrupts_deferred(*, redeliver: bool = True) -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then deliver them to the handlers that were
    in place (KeyboardInterrupt, usually). They are dropped if the block raises (its exception
    ends things anyway) or with `redeliver=False`, for a caller that is ending anyway. Nested
    deferrals leave it to the outermost."""
    global _holding
    if _holding or not _main_thread():
        yield
        return
    received: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda signum, _: received.append(signum)) for sig in STOP_SIGNALS
    }
    _holding = True
    try:
        yield
    finally:
        _holding = False
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for signum in dict.fromkeys(received) if redeliver else ():
        signal.raise_signal(signum)  # its handler runs now: raises, exits or ignores it


@contextlib.contextmanager
def handlers_kept() -> Iterator[None]:
    """SIGINT's and SIGTERM's handlers as they were before the block, whatever a library called
    in it installed (ray.init sets SIGTERM to sys.exit, which would skip jobbench's clean-up)."""
    if not _main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


@contextlib.contextmanager
def call_on_stop_signals(call: Callable[[], object]) -> Iterator[None]:
    """While it lasts, Ctrl-C and SIGTERM run `call` in the signal handler (main thread, between
    two bytecodes: keep it to a flag or a loop.call_soon_threadsafe; what it raises, the
    interrupted code gets). The handlers before come back after (signal.signal, not
    loop.add_signal_handler, whose removal leaves SIGTERM's default, which kills, until they
    are put back). Elsewhere than in the main thread it installs nothing."""

    def handler(signum: int, frame: FrameType | None) -> None:
        call()

    previous: dict[signal.Signals, Any] = {}
    try:
        if _main_thread():
            for sig in STOP_SIGNALS:
                previous[sig] = signal.signal(sig, handler)
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, signal.SIG_DFL if old is None else old)


def stop_signals_call(
    on_signal: Callable[[], object], loop: asyncio.AbstractEventLoop | None = None
) -> contextlib.AbstractContextManager[None]:
    """`call_on_stop_signals` for an asyncio program: each Ctrl-C or SIGTERM schedules
    `on_signal` in `loop` (default: the running one), waking it."""
    if loop is None:
        import asyncio  # here, not at the top: the CLI's commands import this module too

        loop = asyncio.get_running_loop()
    call_soon = loop.call_soon_threadsafe
    return call_on_stop_signals(lambda: call_soon(on_signal))
