"""The hot worker routes (job-take, job-take-batch, job-done) answered without aiohttp's
request machinery: the same queue calls (worker_routes.run_take, JobQueue.finish_many) and the
same answer bytes, written straight to the connection.

At the harness's ceiling (16 workers, 5,300 jobs/s) the queue spent most of its core in
aiohttp's per-request path, building a request, routing it through the middlewares, building
and serializing a response (benchmarks/NOTES.md, the harness's own cost). A worker's requests
are small, whole and alike, so the connection frames them itself (`frame`) and answers the hot
ones here; anything else goes to aiohttp whole and unchanged: every other route, a request
aiohttp must judge (bad query, a body that is not a JSON object, a wrong API key), and any
request while fault rules are in force. A connection whose framing is not plain (chunked,
Expect, Upgrade, a header section without an end) is aiohttp's for good.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from typing import Any

import aiohttp

from fake_queue.http.worker_routes import result_answer
from fake_queue.queue.faults import FaultInjector
from fake_queue.queue.job_queue import JobQueue
from fake_queue.settings import MAX_BATCH_SIZE, ServerSettings

MAX_HEAD_BYTES = 16 * 1024
# A bigger body (a worker's output) goes to aiohttp, which enforces the route's size limit.
MAX_BODY_BYTES = 1024 * 1024
# Header names that make a request's framing aiohttp's business (docs: RFC 9112 section 6).
NOT_PLAIN = frozenset({"transfer-encoding", "expect", "upgrade"})
SERVER = f"Python/{sys.version_info.major}.{sys.version_info.minor} aiohttp/{aiohttp.__version__}"
JSON = "application/json"
JSON_UTF8 = "application/json; charset=utf-8"


class Unframeable(ValueError):
    """The connection's bytes cannot be framed here: aiohttp reads the rest."""


@dataclass(frozen=True, slots=True)
class Framed:
    """One whole request: its line, the headers that matter here, the body, its size."""

    method: str
    path: str
    query: str
    closes: bool  # Connection: close (or another non-keep-alive option)
    has_host: bool  # HTTP/1.1 requires one: aiohttp answers a request without it 400
    authorization: str | None
    body: bytes
    size: int  # bytes of the connection's buffer it used


def frame(buffer: bytearray) -> Framed | None:
    """The first request in `buffer` once it is whole; None until then. Raises Unframeable
    for framing aiohttp must do (or refuse)."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        _check_start(buffer)
        return None
    line, *fields = bytes(buffer[:end]).decode("latin-1").split("\r\n")
    method, target, query = _request_line(line)
    length, lengths, closes, has_host, authorization = 0, 0, False, False, None
    for field in fields:
        name, colon, value = field.partition(":")
        name = name.lower()
        if not colon or name != name.strip() or name in NOT_PLAIN:
            raise Unframeable(name)
        if name == "content-length":
            length, lengths = int(value) if value.strip().isdigit() else -1, lengths + 1
        elif name == "connection":
            closes = value.strip().lower() != "keep-alive"
        elif name == "authorization":
            authorization = value.strip()
        elif name == "host":
            has_host = True
    if lengths > 1 or not 0 <= length <= MAX_BODY_BYTES:
        raise Unframeable("content-length")
    size = end + 4 + length
    if len(buffer) < size:
        return None
    body = bytes(buffer[end + 4 : size])
    return Framed(method, target, query, closes, has_host, authorization, body, size)


def _request_line(line: str) -> tuple[str, str, str]:
    """(method, path, query) of an HTTP/1.1 request line."""
    method, _, rest = line.partition(" ")
    target, _, version = rest.partition(" ")
    if version != "HTTP/1.1" or not method.isupper() or not target.startswith("/"):
        raise Unframeable(line[:40])
    path, _, query = target.partition("?")
    return method, path, query


def _check_start(buffer: bytearray) -> None:
    """A request not whole yet must start as one, or aiohttp answers it now: bytes that are
    not HTTP are refused at once, not waited on."""
    if len(buffer) > MAX_HEAD_BYTES or not buffer[:1].isupper() or b"\x00" in buffer:
        raise Unframeable("not the start of a request")
    line_end = buffer.find(b"\r\n")
    if line_end >= 0:
        _request_line(bytes(buffer[:line_end]).decode("latin-1"))


class Reply:
    """Answer bytes as aiohttp writes them (status line, Content-Type, Content-Length, Date,
    Server), the Date rendered once a second. Each status and type's head is rendered once:
    at a woken group's answer time 63 answers are framed back to back (~1.8 us each before)."""

    def __init__(self) -> None:
        self._second = 0
        self._tail = b""
        self._heads: dict[tuple[int, str], bytes] = {}

    def __call__(self, status: int, body: bytes = b"", content_type: str = JSON) -> bytes:
        now = int(time.time())
        if now != self._second:
            self._second = now
            date = formatdate(now, usegmt=True)
            self._tail = f"Date: {date}\r\nServer: {SERVER}\r\n\r\n".encode()
        if status == 204:
            return b"HTTP/1.1 204 No Content\r\n" + self._tail
        head = self._heads.get((status, content_type))
        if head is None:
            reason = HTTPStatus(status).phrase
            head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n".encode()
            self._heads[status, content_type] = head
        return b"%sContent-Length: %d\r\n%s%s" % (head, len(body), self._tail, body)


@dataclass(frozen=True, slots=True)
class HotTake:
    worker: str
    asked: int
    in_progress: bool
    batch: bool


@dataclass(frozen=True, slots=True)
class HotDone:
    worker: str
    job_id: str
    result: dict[str, Any]


class FastLane:
    """A server's hot routes: which framed requests are hot (`hot`), and their answers."""

    def __init__(self, settings: ServerSettings, queue: JobQueue, faults: FaultInjector) -> None:
        self.queue = queue
        self.faults = faults
        self.prefix = f"/v2/{settings.endpoint_id}/"
        key = settings.api_key
        self.accepted = None if key is None else {key, f"Bearer {key}"}
        self.reply = Reply()

    @classmethod
    def serving(
        cls, settings: ServerSettings, queue: JobQueue, faults: FaultInjector
    ) -> FastLane | None:
        """None where every request must pass a middleware: RunPod's rate limits."""
        return None if settings.rate_limits != "off" else cls(settings, queue, faults)

    def hot(self, request: Framed) -> HotTake | HotDone | None:
        """The hot request `request` is, when it is one this lane answers as aiohttp would."""
        if request.closes or not request.has_host or self.faults.rules:
            return None
        if not request.path.startswith(self.prefix):
            return None
        if self.accepted is not None and request.authorization not in self.accepted:
            return None
        if "%" in request.path:
            return None  # aiohttp decodes it; worker and job ids never need it
        route, _, tail = request.path[len(self.prefix) :].partition("/")
        if request.method == "GET" and route in ("job-take", "job-take-batch"):
            return _take(route == "job-take-batch", tail, request.query)
        if request.method == "POST" and route == "job-done":
            return _done(tail, request.body)
        return None

    def done_answer(self, done: HotDone, arrived_ns: int) -> tuple[bytes, float]:
        """The job-done POST recorded now: its answer and the seconds to send it after."""
        outcomes, delay = self.queue.finish_many(
            done.worker, [(done.job_id, done.result)], arrived_ns
        )
        status, payload = result_answer(outcomes[0])
        return self.reply(status, json.dumps(payload).encode(), JSON_UTF8), delay


def _take(batch: bool, worker: str, query: str) -> HotTake | None:
    params = _params(query)
    if not _is_segment(worker) or params is None:
        return None
    asked = 1
    if batch:
        text = params.get("batch_size")
        if text is not None:
            asked = int(text) if text.isdigit() else 0
            if not 1 <= asked <= MAX_BATCH_SIZE:
                return None  # aiohttp's route answers the 400
    return HotTake(worker, asked, params.get("job_in_progress") == "1", batch)


def _done(tail: str, body: bytes) -> HotDone | None:
    worker, _, job_id = tail.partition("/")
    if not _is_segment(worker) or not _is_segment(job_id) or not body:
        return None
    try:
        result = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return HotDone(worker, job_id, result) if isinstance(result, dict) else None


def _is_segment(text: str) -> bool:
    """What a route's `{name}` matches: a non-empty path segment without braces."""
    return bool(text) and "/" not in text and "{" not in text and "}" not in text


def _params(query: str) -> dict[str, str] | None:
    """The query's parameters, the first of each name as aiohttp's `query.get` reads them;
    None when one is encoded (aiohttp decodes it)."""
    if "%" in query or "+" in query:
        return None
    params: dict[str, str] = {}
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        params.setdefault(name, value)
    return params
