"""Small HTTP helpers shared by the route modules and the server: JSON errors and body
parsing."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError

from fake_queue.queue.job_queue import JobError, JobQueue
from fake_queue.settings import ServerSettings

QUEUE_KEY: web.AppKey[JobQueue] = web.AppKey("queue", JobQueue)
SETTINGS_KEY: web.AppKey[ServerSettings] = web.AppKey("settings", ServerSettings)


def error(status: int, message: str) -> web.Response:
    return web.json_response(error_payload(status, message), status=status)


def error_payload(status: int, message: str) -> dict[str, Any]:
    return {"error": message, "status": status}


def raw_error(status: int, message: str) -> bytes:
    """error()'s answer as bytes, for a connection with no whole request to answer."""
    body = json.dumps(error_payload(status, message)).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        "Content-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def one_line(text: str, limit: int = 200) -> str:
    """aiohttp's parser errors span lines (the bad bytes, a caret under them): make one."""
    return " ".join(text.split())[:limit]


async def json_body(request: web.Request, limit_bytes: int | None = None) -> Any:
    """Parse the body as JSON whatever the Content-Type says (the SDK posts JSON as form)."""
    _check_size(request.content_length or 0, limit_bytes)  # declared: refuse before reading
    try:
        raw = await request.read()
    except RequestPayloadError as exc:  # a body that breaks its framing (bad chunks, cut short)
        raise JobError(400, f"body could not be read: {one_line(str(exc))}") from None
    _check_size(len(raw), limit_bytes)  # a chunked body declares nothing
    if not raw:
        raise JobError(400, "empty body; send a JSON object")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise JobError(400, f"body is not valid JSON: {exc}") from None


def _check_size(size: int, limit_bytes: int | None) -> None:
    if limit_bytes is not None and size > limit_bytes:
        limit_mb = limit_bytes // 1_000_000
        raise JobError(413, f"body of {size} bytes is over the {limit_mb} MB limit of this route")


def int_query(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    text = request.query.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise JobError(400, f"{name}={text!r} is not an integer") from None
    if not low <= value <= high:
        raise JobError(400, f"{name}={value} is out of range; use {low}..{high}")
    return value


# Set by an injected delay: the request reaches the queue only once the delay is over.
DELAYED_ARRIVAL = web.RequestKey("arrival_ns", int)


def arrival_ns(request: web.Request) -> int:
    """When the request reached the queue: when its last bytes arrived (server.
    StampingRequestHandler), not when aiohttp got round to its handler (0.1-0.3 ms later);
    the latency model counts from here. The stamp is real (monotonic) time, the clock of a
    served queue; unstamped, it is now on the queue's clock."""
    stamp = request.get(DELAYED_ARRIVAL) or getattr(request.protocol, "data_received_ns", 0)
    return stamp if isinstance(stamp, int) and stamp > 0 else request.app[QUEUE_KEY].clock.now_ns()


def client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()
