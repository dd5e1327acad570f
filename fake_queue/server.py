"""Run the app on a port (0 picks one), report readiness, shut down cleanly on a signal."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, cast

from aiohttp import web, web_protocol
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError
from aiohttp.web_request import BaseRequest

from fake_queue import precise_loop
from fake_queue.app import build_app
from fake_queue.http_util import QUEUE_KEY, error, one_line, raw_error
from fake_queue.protocol import worker_env as worker_env  # re-exported: tests use the old name
from fake_queue.queue import JobQueue
from fake_queue.settings import ServerSettings

if sys.platform != "win32":
    import resource

# Long-polls are held up to `hold`; the shutdown grace only bounds how long they may linger.
SHUTDOWN_GRACE_S = 1.0
# Errors in a request's bytes, raised by aiohttp's parser: the client's doing, not ours.
CLIENT_MISTAKES = (HttpProcessingError, RequestPayloadError)
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


class StampingRequestHandler(web_protocol.RequestHandler):
    """aiohttp's connection protocol, noting when bytes last arrived: the latency model counts
    from a request's arrival (http_util.arrival_ns), not from when its handler got to run.
    The stamp is real time, `time.monotonic_ns`: the clock of the queue a server runs
    (fake_queue.clock.MONOTONIC), read here directly on the hottest path.

    It also sheds what aiohttp lets linger: headers must be complete `header_timeout` after
    connecting, or after a later request's first byte (else a 408 and close), a connection
    over the server's cap is answered 503, and a malformed request is a JSON 400 and one log
    line, not a traceback. aiohttp's own keep-alive timer closes idle connections."""

    __slots__ = ("_header_timer", "_headers_due", "_server", "data_received_ns")

    def __init__(
        self, server: StampingServer, *, loop: asyncio.AbstractEventLoop, **kwargs: Any
    ) -> None:
        super().__init__(server, loop=loop, **kwargs)
        self.data_received_ns = 0
        self._server = server
        self._headers_due = 0.0  # loop time the headers being read must be in by; 0: none
        self._header_timer: asyncio.TimerHandle | None = None  # at most one per connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._expect_headers()
        if self._server.over_capacity():
            self._request_handler = self._refuse_over_capacity

    def data_received(self, data: bytes) -> None:
        self.data_received_ns = time.monotonic_ns()
        requests_before = self._request_count
        super().data_received(data)
        # A request that came whole, the usual case, costs one comparison and no timer.
        if self._request_count != requests_before:
            self._headers_due = 0.0
        elif data and not self._headers_due and self._awaits_request():
            self._expect_headers()  # the first bytes of a request that is not whole yet

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """A malformed request (status < 500) is the client's mistake: a JSON answer, one line
        in the log."""
        if status >= 500:  # ours: keep aiohttp's answer and traceback
            return super().handle_error(request, status, exc, message)
        reason = one_line(message or str(exc))
        self._log_client_mistake(reason)
        response = error(status, reason)
        response.force_close()
        return response

    def log_exception(self, *args: Any, **kw: Any) -> None:
        """aiohttp logs a body that breaks its framing, found while it drains the rest of the
        body after the answer, as an unhandled exception with its traceback."""
        exc = kw.get("exc_info")
        if isinstance(exc, CLIENT_MISTAKES):
            self._log_client_mistake(one_line(str(exc)))
        else:
            super().log_exception(*args, **kw)

    def _log_client_mistake(self, reason: str) -> None:
        peer = self.peername
        client = peer[0] if isinstance(peer, tuple) else "a client"
        self.logger.warning("fake_queue: a malformed request from %s: %s", client, reason)

    def _awaits_request(self) -> bool:
        """Between requests: aiohttp waits for the next one, none is queued or in progress."""
        waiter = self._waiter
        return waiter is not None and not waiter.done()

    def _expect_headers(self) -> None:
        self._headers_due = self._loop.time() + self._server.settings.header_timeout
        if self._header_timer is None:
            self._header_timer = self._loop.call_at(self._headers_due, self._check_headers)

    def _check_headers(self) -> None:
        """Close if headers are still due and overdue; a timer left over from a request whose
        headers came in time is re-armed for the next one's, not replaced per request."""
        fired_at = self._header_timer.when() if self._header_timer is not None else 0.0
        self._header_timer = None
        if not self._headers_due or self.transport is None:
            return
        if self._headers_due > fired_at:
            self._header_timer = self._loop.call_at(self._headers_due, self._check_headers)
            return
        timeout = self._server.settings.header_timeout
        message = f"request headers not complete within {timeout:g} s (--header-timeout)"
        self.transport.write(raw_error(408, message))
        self.force_close()

    async def _refuse_over_capacity(self, request: BaseRequest) -> web.StreamResponse:
        cap = self._server.settings.max_connections
        message = f"this server is at its cap of {cap} open connections (--max-connections)"
        response = error(503, message + "; retry later")
        response.headers["Retry-After"] = "1"
        response.force_close()
        return response


class StampingServer(web.Server):
    """aiohttp's Server, building StampingRequestHandlers and counting open connections.
    AppRunner builds the Server and has no hook for its class: `adopt` swaps it in."""

    settings: ServerSettings
    open_connections: int

    @classmethod
    def adopt(cls, server: web.Server, settings: ServerSettings) -> StampingServer:
        server.__class__ = cls
        adopted = cast(StampingServer, server)
        adopted.settings = settings
        adopted.open_connections = 0
        return adopted

    def __call__(self) -> StampingRequestHandler:
        return StampingRequestHandler(self, loop=self._loop, **self._kwargs)

    def connection_made(
        self, handler: web_protocol.RequestHandler, transport: asyncio.Transport
    ) -> None:
        super().connection_made(handler, transport)
        self.open_connections += 1

    def connection_lost(
        self, handler: web_protocol.RequestHandler, exc: BaseException | None = None
    ) -> None:
        super().connection_lost(handler, exc)
        self.open_connections -= 1

    def over_capacity(self) -> bool:
        return self.open_connections > self.settings.max_connections


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
    StampingServer.adopt(runner.server, settings)
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
