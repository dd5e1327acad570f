"""The server's connections: aiohttp's protocol with arrival stamps and shedding
(StampingRequestHandler), and the server that builds and counts them (StampingServer); with
a fast lane (fake_queue.http.fast_path), each connection is a lane_handler.LaneRequestHandler."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from aiohttp import web, web_protocol
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError
from aiohttp.web_request import BaseRequest

from fake_queue.http import receive_stamps
from fake_queue.http.fast_path import FastLane
from fake_queue.http.http_util import error, one_line, raw_error
from fake_queue.precise_loop import wake_ns
from fake_queue.settings import ServerSettings

# Errors in a request's bytes, raised by aiohttp's parser: the client's doing, not ours.
CLIENT_MISTAKES = (HttpProcessingError, RequestPayloadError)


class StampingRequestHandler(web_protocol.RequestHandler):
    """aiohttp's connection protocol, noting when bytes last arrived: the latency model counts
    from a request's arrival (http_util.arrival_ns), not from when its handler got to run.
    The stamp is real time, the clock of the queue a server runs (fake_queue.queue.clock.MONOTONIC):
    the kernel's receive time where it can be had (receive_stamps), else when the loop's wait
    found the bytes (precise_loop.wake_ns).

    It also sheds what aiohttp lets linger: headers must be complete `header_timeout` after
    connecting, or after a later request's first byte (else a 408 and close), a connection
    over the server's cap is answered 503, and a malformed request is a JSON 400 and one log
    line, not a traceback. aiohttp's own keep-alive timer closes idle connections."""

    __slots__ = ("_header_timer", "_headers_due", "_received", "_server", "data_received_ns")

    def __init__(
        self, server: StampingServer, *, loop: asyncio.AbstractEventLoop, **kwargs: Any
    ) -> None:
        super().__init__(server, loop=loop, **kwargs)
        self.data_received_ns = 0
        self._received: receive_stamps.StampedSocket | None = None
        self._server = server
        self._headers_due = 0.0  # loop time the headers being read must be in by; 0: none
        self._header_timer: asyncio.TimerHandle | None = None  # at most one per connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._received = receive_stamps.attach(transport)
        self._expect_headers()
        if self._server.over_capacity():
            self._request_handler = self._refuse_over_capacity

    def data_received(self, data: bytes) -> None:
        self.data_received_ns = self.arrival_ns()
        self._feed_aiohttp(data)

    def arrival_ns(self) -> int:
        """When the bytes being read arrived: the kernel's stamp, never after the wake-up."""
        woke = wake_ns(self._loop)
        received = self._received.last_ns if self._received is not None else 0
        return min(received, woke) if received else woke

    def _feed_aiohttp(self, data: bytes) -> None:
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
    lane: FastLane | None
    handler_class: type[StampingRequestHandler]

    @classmethod
    def adopt(
        cls,
        server: web.Server,
        settings: ServerSettings,
        lane: FastLane | None = None,
        handler_class: type[StampingRequestHandler] = StampingRequestHandler,
    ) -> StampingServer:
        """`handler_class` builds each connection; with a `lane`, one that uses it."""
        server.__class__ = cls
        adopted = cast(StampingServer, server)
        adopted.settings = settings
        adopted.open_connections = 0
        adopted.lane = lane
        adopted.handler_class = handler_class
        return adopted

    def __call__(self) -> StampingRequestHandler:
        return self.handler_class(self, loop=self._loop, **self._kwargs)

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
