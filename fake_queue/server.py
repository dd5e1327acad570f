"""Run the app on a port (0 picks one), report readiness, shut down cleanly on a signal."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from aiohttp import web, web_protocol

from fake_queue import precise_loop
from fake_queue.app import build_app
from fake_queue.http_util import QUEUE_KEY
from fake_queue.protocol import worker_env as worker_env  # re-exported: tests use the old name
from fake_queue.queue import JobQueue
from fake_queue.settings import ServerSettings

# Long-polls are held up to `hold`; the shutdown grace only bounds how long they may linger.
SHUTDOWN_GRACE_S = 1.0


@dataclass
class RunningServer:
    runner: web.AppRunner
    settings: ServerSettings  # with the real port
    queue: JobQueue

    @property
    def base_url(self) -> str:
        host = f"[{self.settings.host}]" if ":" in self.settings.host else self.settings.host
        return f"http://{host}:{self.settings.port}"

    @property
    def endpoint_url(self) -> str:
        return f"{self.base_url}/v2/{self.settings.endpoint_id}"

    async def stop(self) -> None:
        await self.runner.cleanup()


class StampingRequestHandler(web_protocol.RequestHandler):
    """aiohttp's connection protocol, noting when bytes last arrived: the latency model counts
    from a request's arrival (http_util.arrival_ns), not from when its handler got to run.
    The stamp is real time, `time.monotonic_ns`: the clock of the queue a server runs
    (fake_queue.clock.MONOTONIC), read here directly on the hottest path."""

    data_received_ns = 0

    def data_received(self, data: bytes) -> None:
        self.data_received_ns = time.monotonic_ns()
        super().data_received(data)


class StampingServer(web.Server):
    def __call__(self) -> StampingRequestHandler:
        return StampingRequestHandler(self, loop=self._loop, **self._kwargs)


async def start_server(settings: ServerSettings) -> RunningServer:
    app = build_app(settings)
    # handler_cancellation: a client that goes away cancels its handler, so its take keeps no jobs.
    runner = web.AppRunner(
        app, handler_cancellation=True, access_log=None, shutdown_timeout=SHUTDOWN_GRACE_S
    )
    await runner.setup()
    assert runner.server is not None
    runner.server.__class__ = StampingServer  # AppRunner builds the Server; its factory is ours
    site = web.TCPSite(runner, settings.host, settings.port, backlog=4096, reuse_address=True)
    await site.start()
    port = int(runner.addresses[0][1]) if runner.addresses else settings.port
    return RunningServer(runner, replace(settings, port=port), app[QUEUE_KEY])


def serve_forever(settings: ServerSettings, on_ready: Callable[[RunningServer], None]) -> None:
    """Serve until SIGINT or SIGTERM, then stop accepting, end long-polls and return."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        server = await start_server(settings)
        on_ready(server)
        try:
            await stop.wait()
        finally:
            await server.stop()

    precise_loop.run(main())


class ServerThread:
    """The server on its own event loop in a background thread (tests, embedded use)."""

    def __init__(self, settings: ServerSettings) -> None:
        self._settings = settings
        self._loop = precise_loop.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="fake-queue")
        self.server: RunningServer | None = None
        self._error: BaseException | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self.server = self._loop.run_until_complete(start_server(self._settings))
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self.server.stop())
        self._loop.close()

    def start(self) -> RunningServer:
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise self._error
        assert self.server is not None
        return self.server

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
