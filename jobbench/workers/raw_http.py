"""job-done POSTs over a few keep-alive connections with hand-built HTTP/1.1 requests. Stdlib.

A drained batch posts all its results at the instant its next take answer arrives; through
aiohttp's client each POST costs the worker ~0.25 ms of CPU, which delayed that take answer by
5 ms a cycle (docs/performance.md, harness overhead). Plain streams cost a fraction of that.
Only plain http (the fake queue); anything else goes through aiohttp.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit

MAX_CONNECTIONS = 8
MAX_HEADER_LINES = 100


class RawHttpError(ConnectionError):
    """The connection failed or the answer was not HTTP/1.1 as expected."""


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class RawPoster:
    def __init__(self, base_url: str, headers: dict[str, str]) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"RawPoster speaks plain http only, not {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        host_header = parts.netloc
        self._head = "".join(f"{k}: {v}\r\n" for k, v in {"Host": host_header, **headers}.items())
        self._idle: list[Connection] = []
        self._open = 0
        self._freed = asyncio.Condition()

    @staticmethod
    def accepts(url: str) -> bool:
        return urlsplit(url).scheme == "http"

    async def post(self, url: str, body: bytes) -> int:
        """POST `body` to `url` (same host); returns the status. Raises RawHttpError."""
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        request = (
            f"POST {target} HTTP/1.1\r\n{self._head}Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        reader, writer = await self._acquire()
        try:
            writer.write(request)
            status, keep = await _read_response(reader)
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            await self._discard(writer)
            raise RawHttpError(f"job-done POST failed: {type(exc).__name__}: {exc}") from None
        except BaseException:
            await self._discard(writer)
            raise
        if keep:
            await self._release((reader, writer))
        else:
            await self._discard(writer)
        return status

    async def _acquire(self) -> Connection:
        async with self._freed:
            while not self._idle and self._open >= MAX_CONNECTIONS:
                await self._freed.wait()
            if self._idle:
                return self._idle.pop()
            self._open += 1
        try:
            return await asyncio.open_connection(self.host, self.port)
        except OSError as exc:
            await self._forget()
            raise RawHttpError(f"cannot connect to {self.host}:{self.port}: {exc}") from None

    async def _release(self, connection: Connection) -> None:
        async with self._freed:
            self._idle.append(connection)
            self._freed.notify()

    async def _discard(self, writer: asyncio.StreamWriter) -> None:
        writer.close()
        await self._forget()

    async def _forget(self) -> None:
        async with self._freed:
            self._open -= 1
            self._freed.notify()

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """Status and whether the connection stays open; the body is read and dropped."""
    status_line = await reader.readuntil(b"\r\n")
    version, code, *_ = status_line.decode("latin-1").split(" ", 2)
    if not version.startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x answer: {status_line[:40]!r}")
    length, keep = 0, version == "HTTP/1.1"
    for _ in range(MAX_HEADER_LINES):
        line = await reader.readuntil(b"\r\n")
        if line == b"\r\n":
            break
        name, _, value = line.decode("latin-1").partition(":")
        name, value = name.strip().lower(), value.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "connection":
            keep = value == "keep-alive" or (keep and value != "close")
        elif name == "transfer-encoding":
            raise ValueError("chunked answers are not expected from job-done")
    else:
        raise ValueError("too many header lines")
    if length:
        await reader.readexactly(length)
    return int(code), keep
