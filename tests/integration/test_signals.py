"""procs/signals.py, in process: `call_on_stop_signals` turns Ctrl-C and SIGTERM into a call,
`stop_signals_call` into one in the event loop, and both put the handlers from before back.
(The model worker's use of it, with real processes: tests/integration/test_model_worker.py;
the deferral: test_process_cleanup.py.)"""

from __future__ import annotations

import asyncio
import signal
import threading
from types import FrameType

from jobbench.procs.signals import call_on_stop_signals, stop_signals_call


def test_stop_signals_call_runs_the_call_in_the_loop_then_puts_the_handlers_back() -> None:
    seen: list[int] = []

    def before(signum: int, frame: FrameType | None) -> None:
        seen.append(-signum)  # the handler in place before: must not run inside the block

    async def signalled() -> list[tuple[int, bool]]:
        loop = asyncio.get_running_loop()
        calls: list[tuple[int, bool]] = []
        called = asyncio.Event()

        def on_signal() -> None:  # (loop time order, ran inside the loop)
            calls.append((len(calls), asyncio.get_running_loop() is loop))
            called.set()

        with stop_signals_call(on_signal):
            for sig in (signal.SIGTERM, signal.SIGINT):  # SIGINT: no KeyboardInterrupt either
                called.clear()
                signal.raise_signal(sig)
                await asyncio.wait_for(called.wait(), 5)
        return calls

    previous = {sig: signal.signal(sig, before) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert asyncio.run(signalled()) == [(0, True), (1, True)]
        assert seen == []
        assert signal.getsignal(signal.SIGTERM) is before
        assert signal.getsignal(signal.SIGINT) is before
        signal.raise_signal(signal.SIGTERM)  # after the block: the handler from before again
        assert seen == [-signal.SIGTERM]
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def test_stop_signals_call_outside_the_main_thread_installs_nothing() -> None:
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    inside: list[dict[int, object]] = []

    async def block() -> None:
        with stop_signals_call(lambda: None):
            inside.append({sig: signal.getsignal(sig) for sig in handlers})

    thread = threading.Thread(target=lambda: asyncio.run(block()))
    thread.start()
    thread.join(10)
    assert inside == [handlers]
    assert {sig: signal.getsignal(sig) for sig in handlers} == handlers


def test_call_on_stop_signals_calls_from_the_handler_instead_of_interrupting() -> None:
    calls: list[str] = []
    before = signal.getsignal(signal.SIGINT)
    with call_on_stop_signals(lambda: calls.append("called")):
        signal.raise_signal(signal.SIGINT)  # no KeyboardInterrupt
        signal.raise_signal(signal.SIGTERM)  # and no exit
        assert calls == ["called", "called"]  # by the time raise_signal returns
    assert signal.getsignal(signal.SIGINT) is before
