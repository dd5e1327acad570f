"""The HTTP layer of live mode: one async client, answers with client-side times, and the split
between "never sent" (safe to resend) and "sent, outcome unknown" (never resend a /run).

aiohttp, not httpx: measured on this 2-core box against the fake queue, httpx 0.28 (httpcore
1.0.9) managed 180-200 /run per second at 64-190 connections (its pool does O(connections^2) work
per request) and /status answers took a median 0.5 s in the client at 64 in flight, which would
land in every client-observed time; aiohttp did 9,000-11,000 per second at the same concurrency.
"""

from __future__ import annotations

import json as jsonlib
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from jobbench.clients.endpoint import KEY_ENV, Endpoint, redact
from jobbench.errors import JobbenchError, RunFailed, UsageError

REQUEST_TIMEOUT_S = 10.0  # what the SDK's Endpoint.run uses
CONNECT_TIMEOUT_S = 5.0
PREFLIGHT_TIMEOUT_S = 5.0
IDLE_CLOSE_S = 15.0  # close idle connections before a server would, so none goes stale mid-send


class NotSent(Exception):
    """The request never reached the server (connect failed): resending cannot duplicate."""


class OutcomeUnknown(Exception):
    """The request may have reached the server but no answer came back."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    sent_ns: int
    received_ns: int
    retry_after_s: float | None = None

    @property
    def retryable(self) -> bool:
        """429 and 5xx prove the request was not acted on, so it may be sent again."""
        return self.status == 429 or self.status >= 500


def _retry_after(headers: Any) -> float | None:
    try:
        return float(headers.get("Retry-After", ""))
    except ValueError:
        return None


def _body(raw: bytes) -> Any:
    try:
        return jsonlib.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class LiveHttp:
    """Must be made inside the event loop that uses it (aiohttp sessions belong to one loop)."""

    def __init__(self, endpoint: Endpoint, max_connections: int = 300) -> None:
        self.endpoint = endpoint
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        self._session = aiohttp.ClientSession(
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S, sock_connect=CONNECT_TIMEOUT_S),
            connector=aiohttp.TCPConnector(limit=max_connections, keepalive_timeout=IDLE_CLOSE_S),
        )

    async def close(self) -> None:
        await self._session.close()

    async def request(
        self, method: str, path: str, json: Any = None, timeout_s: float | None = None
    ) -> Answer:
        sent = time.monotonic_ns()
        extra: dict[str, Any] = {}
        if timeout_s is not None:
            extra["timeout"] = aiohttp.ClientTimeout(total=timeout_s, sock_connect=timeout_s)
        try:
            async with self._session.request(
                method, self.endpoint.url + path, json=json, **extra
            ) as response:
                raw = await response.read()
                status, headers = response.status, response.headers
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            raise NotSent(self.scrub(_reason(exc))) from None
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise OutcomeUnknown(self.scrub(_reason(exc))) from None
        return Answer(status, _body(raw), sent, time.monotonic_ns(), _retry_after(headers))

    def scrub(self, text: str) -> str:
        return redact(text, self.endpoint.api_key)

    def fatal(self, answer: Answer, route: str) -> JobbenchError:
        """The run cannot go on: name what the endpoint said and the flag that fixes it."""
        url = self.endpoint.url
        if answer.status in (401, 403) and not self.endpoint.api_key:
            return UsageError(
                f"--api-key: {url} answered {answer.status} to {route} and no API key was "
                f"given; pass --api-key KEY or set {KEY_ENV}"
            )
        if answer.status in (401, 403):
            return RunFailed(
                f"{url} answered {answer.status} to {route}: the API key was refused; check "
                f"--api-key or {KEY_ENV}"
            )
        if answer.status == 404 and route in ("/health", "/run"):
            return RunFailed(
                f"{url} answered 404 to {route}: no such endpoint; check --endpoint "
                "(an endpoint id or a .../v2/ENDPOINT_ID URL)"
            )
        detail = self.scrub(str(answer.body))[:200]
        hint = "; check --input / --inputs" if route == "/run" and answer.status < 500 else ""
        return RunFailed(f"{url} answered {answer.status} to {route}: {detail}{hint}")

    async def preflight(self) -> None:
        """One /health call: a wrong key or an unreachable endpoint fails in seconds, not later."""
        try:
            answer = await self.request("GET", "/health", timeout_s=PREFLIGHT_TIMEOUT_S)
        except (NotSent, OutcomeUnknown) as exc:
            raise RunFailed(
                f"cannot reach the endpoint {self.endpoint.url} ({exc}); check --endpoint "
                "and that the endpoint is up"
            ) from None
        if answer.status in (401, 403, 404):
            raise self.fatal(answer, "/health")
