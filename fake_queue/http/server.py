"""Run the app on a port (0 picks one), report readiness, shut down cleanly on a signal."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from aiohttp import web

from fake_queue import precise_loop
from fake_queue.http.app import FAULTS_KEY, build_app
from fake_queue.http.connections import StampingRequestHandler
from fake_queue.http.connections import StampingServer as StampingServer  # re-exported for tests
from fake_queue.http.fast_path import FastLane
from fake_queue.http.http_util import QUEUE_KEY
from fake_queue.http.lane_handler import LaneRequestHandler
from fake_queue.protocol import worker_env as worker_env  # re-exported: tests use the old name
from fake_queue.queue.job_queue import JobQueue
from fake_queue.settings import ServerSettings

if sys.platform != "win32":
    import resource

# Long-polls are held up to `hold`; the shutdown grace only bounds how long they may linger.
SHUTDOWN_GRACE_S = 1.0
# Descriptors beyond the connection cap: the connections over it, until answered 503, and
# what else the process holds open (the listening socket, the loop, log files).
SPARE_FILES = 256


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


async def start_server(settings: ServerSettings) -> RunningServer:
    app = build_app(settings)
    # handler_cancellation: a client that goes away cancels its handler, so its take keeps no jobs.
    # keepalive_timeout: aiohttp closes a connection idle this long between requests.
    runner = web.AppRunner(
        app,
        handler_cancellation=True,
        access_log=None,
        shutdown_timeout=SHUTDOWN_GRACE_S,
        keepalive_timeout=settings.idle_timeout,
    )
    await runner.setup()
    assert runner.server is not None
    lane = FastLane.serving(settings, app[QUEUE_KEY], app[FAULTS_KEY])
    handlers = StampingRequestHandler if lane is None else LaneRequestHandler
    StampingServer.adopt(runner.server, settings, lane, handlers)
    site = web.TCPSite(runner, settings.host, settings.port, backlog=4096, reuse_address=True)
    await site.start()
    port = int(runner.addresses[0][1]) if runner.addresses else settings.port
    return RunningServer(runner, replace(settings, port=port), app[QUEUE_KEY])


def fit_open_file_limit(settings: ServerSettings) -> ServerSettings:
    """Raise this process's open-file limit as far as the cap needs (a soft limit of 1,024 is
    common), so connections over the cap get the 503 rather than a failed accept; where the
    hard limit is too low, lower the cap to fit."""
    if sys.platform == "win32":
        return settings
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = settings.max_connections + SPARE_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):  # macOS refuses past its own per-process maximum
            pass
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return settings
    return replace(settings, max_connections=max(1, soft - SPARE_FILES))


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

    precise_loop.run(main(), idle_collection=True)


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
