"""A connection served by the fast lane (fake_queue.http.fast_path): it frames its requests itself,
answers the hot ones through the lane and passes every other one to aiohttp whole.

Answers keep the requests' order, as HTTP/1.1 requires of a pipelined connection. A job-done
is recorded on arrival and its answer waits its own done latency in a queue of answers (as
concurrent POSTs would each wait theirs), so a worker's pipelined results are not serialized
behind one another; the answers ready together go out in one write. A take is answered before
the next request is read, as aiohttp answers one; so is a request passed to aiohttp, which
waits until the answers before it are out.
"""

from __future__ import annotations

import asyncio
from collections import deque
from functools import partial
from typing import Any

from fake_queue.http.connections import StampingRequestHandler, StampingServer
from fake_queue.http.fast_path import FastLane, Framed, HotDone, HotTake, Unframeable, frame
from fake_queue.http.http_util import raw_error
from fake_queue.http.worker_routes import run_take


class _QueuedAnswer:
    """One answer in the connection's queue: its bytes, and whether it may go out yet."""

    __slots__ = ("body", "ready", "timer")

    def __init__(self, body: bytes, ready: bool) -> None:
        self.body = body
        self.ready = ready
        self.timer: asyncio.TimerHandle | None = None


class LaneRequestHandler(StampingRequestHandler):
    __slots__ = ("_answers", "_lane", "_pending", "_take")

    def __init__(
        self, server: StampingServer, *, loop: asyncio.AbstractEventLoop, **kwargs: Any
    ) -> None:
        super().__init__(server, loop=loop, **kwargs)
        self._lane: FastLane | None = server.lane  # with no lane, aiohttp reads every request
        self._pending = bytearray()  # bytes of requests not yet answered or passed on
        self._answers: deque[_QueuedAnswer] = deque()  # the lane's answers not yet written
        self._take: asyncio.Task[None] | None = None  # the take being answered

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if self._server.over_capacity():
            self._lane = None  # over the cap: aiohttp answers each of its requests 503

    def data_received(self, data: bytes) -> None:
        self.data_received_ns = self.arrival_ns()
        if self._lane is None:
            self._feed_aiohttp(data)
        elif not (self._force_close or self._close):
            self._pending += data
            self._next_requests()

    def _next_requests(self) -> None:
        """Answer or pass on the whole requests buffered, in order, writing the answers as
        they are ready."""
        while self._serve_buffered():  # it stopped for answers written since: serve again
            pass

    def _serve_buffered(self) -> bool:
        """Serve buffered requests until one must wait, then write the answers ready. True
        when one waited only for answers that are now written."""
        lane, behind_answers = self._lane, False
        while lane is not None and self._pending and self._take is None:
            try:
                request = frame(self._pending)
            except Unframeable:
                if self._answers:
                    behind_answers = True  # aiohttp may read it once the answers are out
                    break
                self._lane = None  # aiohttp reads every later request on it
                data, self._pending = bytes(self._pending), bytearray()
                self._feed_aiohttp(data)
                return False
            if request is None:
                self._wait_for_rest()
                break
            idle = not self._request_in_progress and not self._messages
            hot = lane.hot(request) if idle else None
            if isinstance(hot, HotDone):
                self._consume(request)
                self._answer_done(lane, hot)
            elif self._answers:
                behind_answers = True  # a take or aiohttp's request waits for the answers
                break
            elif isinstance(hot, HotTake):
                self._consume(request)
                self._take = self._loop.create_task(self._answer_take(lane, hot))
            else:
                self._feed_aiohttp(self._consume(request, keep=True))
        self._write_ready()
        return behind_answers and not self._answers

    def _consume(self, request: Framed, keep: bool = False) -> bytes:
        """Take the request's bytes off the buffer; a copy only when `keep` (for aiohttp)."""
        self._headers_due = 0.0
        whole = bytes(self._pending[: request.size]) if keep else b""
        del self._pending[: request.size]
        return whole

    def _wait_for_rest(self) -> None:
        """A request not whole yet: the header timeout runs until its head is in."""
        if b"\r\n\r\n" in self._pending:
            self._headers_due = 0.0
        elif not self._headers_due:
            self._expect_headers()

    def _answer_done(self, lane: FastLane, done: HotDone) -> None:
        body, delay = lane.done_answer(done, self.data_received_ns)
        answer = _QueuedAnswer(body, ready=delay <= 0)
        if not answer.ready:
            answer.timer = self._loop.call_later(delay, self._done_due, answer)
        self._answers.append(answer)

    def _done_due(self, answer: _QueuedAnswer) -> None:
        answer.ready, answer.timer = True, None
        self._next_requests()

    async def _answer_take(self, lane: FastLane, hot: HotTake) -> None:
        try:
            take, jobs, _ = await run_take(
                lane.queue, hot.worker, hot.asked, hot.in_progress, self.data_received_ns,
                self._client_gone, batch=hot.batch, send=partial(self._send_jobs, lane),
            )  # fmt: skip
        except Exception as exc:  # a bug of ours: a 500, and the connection closed
            self.log_exception("fake_queue: the fast lane failed a take", exc_info=exc)
            if self.transport is not None:
                self.transport.write(raw_error(500, "internal error answering the take"))
            self.force_close()
            return
        if jobs:
            # await_answer wrote the answer at its answer time, with every take due then.
            # As after aiohttp's write, a big answer waits here until the client has read
            # enough of it, so a slow client holds back its own connection only.
            try:
                await self._drain_helper()
            except (ConnectionError, asyncio.CancelledError):
                lane.queue.undeliver(take, jobs)
                raise
            if self._client_gone():  # it left before all arrived: the jobs go back to the front
                lane.queue.undeliver(take, jobs)
                return
        else:
            self._write(lane.reply(204))
        self._take = None
        self._next_requests()

    def _send_jobs(self, lane: FastLane, body: bytes) -> None:
        """A take's answer, at its answer time: `await_answer` has just seen the client here."""
        self._write(lane.reply(200, body), client_seen=True)

    def _write_ready(self) -> None:
        ready = []
        while self._answers and self._answers[0].ready:
            ready.append(self._answers.popleft().body)
        if ready:
            self._write(b"".join(ready))

    def _write(self, data: bytes, client_seen: bool = False) -> None:
        """Write the lane's answers and restart the idle timer, as aiohttp does after one.
        `client_seen`: the caller has just found the client there (a take's answer time)."""
        if not client_seen and self._client_gone():
            return
        assert self.transport is not None
        self.transport.write(data)
        self._idle_from_now()

    def _idle_from_now(self) -> None:
        close_time = self._loop.time() + self._keepalive_timeout
        self._next_keepalive_close_time = close_time
        if self._keepalive_handle is None and self._keepalive_timeout:
            self._keepalive_handle = self._loop.call_at(close_time, self._process_keepalive)

    def _client_gone(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    def _process_keepalive(self) -> None:
        """aiohttp closes a connection idle between its requests; one the lane is still
        answering (a long-poll, a done latency) is not idle."""
        if self._take is not None or self._answers:
            self._keepalive_handle = None
            self._idle_from_now()
            return
        super()._process_keepalive()

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._take is not None:  # cancelled, await_answer gives the take's jobs back
            self._take.cancel()
            self._take = None
        for answer in self._answers:
            if answer.timer is not None:
                answer.timer.cancel()
        self._answers.clear()
        self._pending.clear()
        super().connection_lost(exc)
