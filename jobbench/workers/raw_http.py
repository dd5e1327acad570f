"""A lean keep-alive HTTP/1.1 client for the model worker's job-takes and job-dones. Stdlib.

Each cycle of a drain or take-ahead worker is a take round trip and a batch of job-done POSTs,
all on the critical path of the next batch. Through aiohttp's client a request costs the worker
~0.25 ms of CPU and a take answer ~0.5 ms from socket to jobs (benchmarks/NOTES.md, harness
overhead); a protocol that parses each answer in one pass costs a fraction of that. Plain http
(the fake queue) only, answers with a Content-Length; anything else goes through aiohttp.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from fake_queue.precise_loop import wake_ns

MAX_HEAD_BYTES = 64 * 1024
NO_BODY_STATUSES = frozenset({204, 304})


class RawHttpError(ConnectionError):
    """The connection failed or the answer was not HTTP/1.1 as expected."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    content_type: str  # media type only, lower case: "application/json"
    body: bytes
    arrived: float = 0.0  # loop time its first bytes were found (precise_loop.wake_ns)


class _Connection(asyncio.Protocol):
    """One keep-alive connection; its requests' answers come back in order (pipelined when
    several are written at once), each parsed in one pass."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()  # once: each lookup costs a getpid() call
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.arrived = 0.0  # when the buffered answer's first bytes were found
        self.waiters: deque[asyncio.Future[tuple[Answer, bool]]] = deque()
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if not self.buffer:
            self.arrived = wake_ns(self.loop) / 1e9
        self.buffer += data
        while self.waiters:
            waiter = self.waiters[0]
            try:
                parsed = parse_answer(self.buffer, self.arrived)
            except ValueError as exc:
                self._fail(RawHttpError(f"bad HTTP answer: {exc}"))
                return
            if parsed is None:
                return
            answer, keep, used = parsed
            del self.buffer[:used]
            self.waiters.popleft()
            if not waiter.done():
                waiter.set_result((answer, keep))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(RawHttpError(f"connection closed: {exc or 'by the server'}"))

    def _fail(self, error: RawHttpError) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_exception(error)

    def send(self, requests: bytes, count: int) -> list[asyncio.Future[tuple[Answer, bool]]]:
        """Write `count` requests at once; a future for each answer, in order."""
        assert self.transport is not None
        futures = [self.loop.create_future() for _ in range(count)]
        self.waiters.extend(futures)
        self.transport.write(requests)
        return futures

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def parse_answer(buffer: bytearray, arrived: float = 0.0) -> tuple[Answer, bool, int] | None:
    """(answer, keep-alive, bytes used) once a whole answer is buffered; None until then.
    `arrived`: when its first bytes were found."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        if len(buffer) > MAX_HEAD_BYTES:
            raise ValueError("header section too long")
        return None
    status_line, *lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
    version, _, rest = status_line.partition(" ")
    if not version.startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x answer: {status_line[:40]!r}")
    status = int(rest[:3])
    length, keep, content_type = 0, version == "HTTP/1.1", ""
    for line in lines:
        name, _, value = line.partition(":")
        name, value = name.strip().lower(), value.strip()
        if name == "content-length":
            length = int(value)
        elif name == "content-type":
            content_type = value.partition(";")[0].strip().lower()
        elif name == "connection":
            keep = value.lower() == "keep-alive" or (keep and value.lower() != "close")
        elif name == "transfer-encoding":
            raise ValueError("chunked answers are not expected from the queue")
    if status in NO_BODY_STATUSES:
        length = 0
    used = end + 4 + length
    if len(buffer) < used:
        return None
    return Answer(status, content_type, bytes(buffer[end + 4 : used]), arrived), keep, used


class RawClient:
    """Requests to one host over at most `limit` keep-alive connections."""

    def __init__(self, base_url: str, headers: dict[str, str], limit: int = 8) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"RawClient speaks plain http only, not {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.limit = limit
        self._head = "".join(f"{k}: {v}\r\n" for k, v in {"Host": parts.netloc, **headers}.items())
        self._idle: list[_Connection] = []
        self._open = 0
        self._freed = asyncio.Condition()

    @staticmethod
    def accepts(url: str) -> bool:
        return urlsplit(url).scheme == "http"

    async def request(
        self,
        method: str,
        url: str,
        body: bytes = b"",
        on_sent: Callable[[], None] | None = None,
    ) -> Answer:
        """`method` `url` (same host); `on_sent` runs once the request is on the wire.
        Raises RawHttpError; cancelling closes the connection (the server sees the client go)."""
        connection = await self._acquire()
        try:
            (answer_of,) = connection.send(self._request(method, url, body), 1)
            if on_sent is not None:
                on_sent()
            answer, keep = await answer_of
        except BaseException:
            await self._discard(connection)
            raise
        await self._give_back(connection, keep)
        return answer

    async def pipeline(
        self, method: str, requests: Sequence[tuple[str, bytes]]
    ) -> list[Answer | RawHttpError]:
        """`method` each (url, body), written back to back on one connection (HTTP/1.1
        pipelining: one write, the answers read as they come, in order). Each answer, or the
        error that left it unanswered. Cancelling closes the connection."""
        connection = await self._acquire()
        wire = b"".join(self._request(method, url, body) for url, body in requests)
        outcomes: list[Answer | RawHttpError] = []
        keep = True
        try:
            for answer_of in connection.send(wire, len(requests)):
                try:
                    answer, keep_this = await answer_of
                except RawHttpError as exc:
                    outcomes.append(exc)
                    keep = False
                else:
                    outcomes.append(answer)
                    keep = keep and keep_this
        except BaseException:
            await self._discard(connection)
            raise
        await self._give_back(connection, keep)
        return outcomes

    def _request(self, method: str, url: str, body: bytes) -> bytes:
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        length = f"Content-Length: {len(body)}\r\n" if body or method == "POST" else ""
        return f"{method} {target} HTTP/1.1\r\n{self._head}{length}\r\n".encode() + body

    async def _give_back(self, connection: _Connection, keep: bool) -> None:
        if keep and not connection.closed:
            await self._release(connection)
        else:
            await self._discard(connection)

    async def _acquire(self) -> _Connection:
        async with self._freed:
            while not self._idle and self._open >= self.limit:
                await self._freed.wait()
            while self._idle:
                connection = self._idle.pop()
                if not connection.closed:
                    return connection
                self._open -= 1  # the server closed it while idle
            self._open += 1
        try:
            _, protocol = await asyncio.get_running_loop().create_connection(
                _Connection, self.host, self.port
            )
        except OSError as exc:
            await self._forget()
            raise RawHttpError(f"cannot connect to {self.host}:{self.port}: {exc}") from None
        return protocol

    async def _release(self, connection: _Connection) -> None:
        async with self._freed:
            self._idle.append(connection)
            self._freed.notify()

    async def _discard(self, connection: _Connection) -> None:
        connection.close()
        await self._forget()

    async def _forget(self) -> None:
        async with self._freed:
            self._open -= 1
            self._freed.notify()

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
        await asyncio.sleep(0)  # let the transports finish closing
