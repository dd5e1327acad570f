"""Client of the fake queue's bench-control routes (/_bench/...): JSON over one kept-alive
connection, with the standard library's http.client. Not httpx: every `jobbench` process talks
to the queue, and httpx's import (~150 ms of a CLI start, measured on this 2-core box) is the
largest part of it; these few sequential JSON calls need nothing http.client lacks."""

from __future__ import annotations

import http.client
import json
import select
import time
from typing import Any
from urllib.parse import urlencode, urlsplit

from jobbench.clients.pipelined_post import PipelinedPoster
from jobbench.errors import RunFailed, UsageError

EVENT_PAGE = 50_000


def split_server(server: str) -> tuple[str, str]:
    """(base URL, endpoint URL) from `--server http://A:8000` or `http://A:8000/v2/ID`."""
    url = server.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--server {server!r}: give the queue's URL, e.g. http://10.0.0.5:8000")
    base = url.split("/v2/")[0]
    return base, (url if "/v2/" in url else base + "/v2/local")


def probe_server(server: str, api_key: str | None) -> None:
    """`--server` before anything starts: its URL, that it answers, that it takes the key, and
    that it serves the endpoint the workers will poll."""
    base, _ = split_server(server)
    client = BenchClient(base, api_key, timeout_s=5.0)
    try:
        client.workers()
        check_endpoint(client, server)
    finally:
        client.close()


def check_endpoint(client: BenchClient, server: str) -> None:
    """The endpoint the workers would poll (`--server`'s /v2/ID, else `local`) is the one the
    queue serves: at another, every take is answered 404 and an SDK worker retries at once,
    thousands of times a second, until the start-up's bound runs out."""
    base, endpoint_url = split_server(server)
    wanted = endpoint_url.split("/v2/", 1)[1]
    served = client.endpoint_id()
    if served is not None and served != wanted:
        raise UsageError(
            f"--server {server}: the queue serves endpoint {served!r}, not {wanted!r}; "
            f"pass --server {base}/v2/{served}"
        )


def burst_body(count: int, inputs: list[Any]) -> dict[str, Any]:
    """/_bench/burst's body: `count` jobs, the inputs cycled over them."""
    if len(inputs) == 1:
        return {"count": count, "input": inputs[0]}
    return {"count": count, "inputs": inputs}


class BenchClient:
    def __init__(self, base_url: str, api_key: str | None = None, timeout_s: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        self._prefix = parts.path.rstrip("/") + "/_bench"
        kind = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        self._conn = kind(parts.netloc, timeout=timeout_s)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._api_key, self._timeout_s = api_key, timeout_s

    def twin(self) -> BenchClient:
        """A client of the same queue on a connection of its own (one per thread)."""
        return BenchClient(self.base_url, self._api_key, self._timeout_s)

    def close(self) -> None:
        self._conn.close()

    def _call(
        self, method: str, path: str, body: Any = None, missing_ok: bool = False, **params: Any
    ) -> Any:
        """The route's JSON answer; `missing_ok`: None when the queue has no such route."""
        url = self._prefix + path + (f"?{urlencode(params)}" if params else "")
        headers = dict(self._headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            self._drop_if_closed()
            self._conn.request(method, url, body=data, headers=headers)
            response = self._conn.getresponse()
            status, text = response.status, response.read().decode(errors="replace")
        except (OSError, http.client.HTTPException) as exc:
            self._conn.close()
            raise RunFailed(
                f"fake queue at {self.base_url} is unreachable ({exc}); check --server "
                "and that the queue runs there"
            ) from None
        if status == 401 and not self._headers:
            raise UsageError(
                f"--api-key: the fake queue at {self.base_url} needs an API key and none was "
                "given; pass the key it was started with as --api-key KEY"
            )
        if status == 401:
            raise RunFailed(
                f"fake queue at {self.base_url} refused the API key (401); pass "
                "the key it was started with as --api-key"
            )
        if status == 404 and missing_ok:
            return None
        if status >= 400:
            raise RunFailed(f"fake queue answered {status} to {path}: {text[:200]}")
        return json.loads(text)

    def _drop_if_closed(self) -> None:
        """A kept-alive connection the server closed while idle reads as ready (EOF): close it
        before sending, so the request goes on a fresh one instead of failing. Nothing was sent
        on it, so no request (a burst) can be sent twice."""
        sock = self._conn.sock
        if sock is not None and select.select([sock], [], [], 0)[0]:
            self._conn.close()

    def set_latency(self, model: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self._call("PUT", "/latency", model)
        return result

    def set_fleet(
        self, settings: dict[str, Any] | None, id_prefix: str = "w", seed: int | None = None
    ) -> None:
        """An autoscaled fleet from now on (fake_queue/queue/autoscaled_fleet.py); None: a fixed
        one again."""
        self._call("PUT", "/fleet", {"settings": settings, "id_prefix": id_prefix, "seed": seed})

    def fleet(self, since: int = 0) -> dict[str, Any]:
        """The fleet's orders from `since` on, each worker's state, at_rest, now_ns."""
        result: dict[str, Any] = self._call("GET", "/fleet", since=since)
        return result

    def fleet_report(self, worker: str, what: str, rc: int | None = None) -> None:
        """A worker process `started` or `exited` (with its exit code)."""
        self._call("POST", "/fleet/report", {"worker": worker, "what": what, "rc": rc})

    def reset(self) -> int:
        return int(self._call("POST", "/reset")["cursor"])

    def renew_takes(self) -> int:
        """Answer every waiting take now, empty: the workers take again, as after a rep's
        pause as long as the hold (between reps). How many were answered."""
        return int(self._call("POST", "/renew")["renewed"])

    def release(self, worker: str | None = None) -> int:
        """Answer the workers' waiting long-polls now (they are being stopped), or only
        `worker`'s."""
        if worker is None:
            return int(self._call("POST", "/release")["released"])
        return int(self._call("POST", "/release", worker=worker)["released"])

    def refreshed(self, worker: str, rc: int | None) -> None:
        """A refresh carried out: `worker`'s process exited with `rc`, a fresh one starts."""
        self._call("POST", "/refreshed", {"worker": worker, "rc": rc})

    def endpoint_id(self) -> str | None:
        """The endpoint id the queue serves its worker and client routes under (/v2/ID); None
        from a queue too old to say."""
        answer = self._call("GET", "/endpoint", missing_ok=True)
        return None if answer is None else str(answer["endpoint_id"])

    def burst(self, count: int, inputs: list[Any]) -> dict[str, Any]:
        """`count` jobs at once (a rate profile's waves go by the submit pacer's own poster,
        with their intended times)."""
        result: dict[str, Any] = self._call("POST", "/burst", burst_body(count, inputs))
        return result

    def clock_offset_ns(self, pings: int = 8) -> tuple[int, int]:
        """(the queue's clock less this process's time.monotonic_ns(), the estimate's error
        bound): of `pings` round trips, the shortest's midpoint against the queue's reading
        (NTP's rule; the error is at most half that round trip)."""
        best: tuple[int, int] | None = None
        for _ in range(pings):
            sent = time.monotonic_ns()
            now = int(self._call("GET", "/clock")["now_ns"])
            back = time.monotonic_ns()
            if best is None or back - sent < 2 * best[1]:
                best = (now - (sent + back) // 2, (back - sent + 1) // 2)
        assert best is not None
        return best

    def pipelined(self, path: str) -> PipelinedPoster:
        """A pipelined sender of POSTs to /_bench/`path` on a connection of its own."""
        return PipelinedPoster(self.base_url, self._prefix + path, self._api_key, self._timeout_s)

    def state(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/state")
        return result

    def counts(self) -> dict[str, int]:
        """Jobs per status; cheap enough to poll while a rep runs."""
        result: dict[str, int] = self._call("GET", "/counts")["counts"]
        return result

    def workers(self, overdue_s: float | None = None, ids: bool = False) -> dict[str, Any]:
        """The queue's view of each worker (fake_queue.queue.watch): polling, held, idle..."""
        params: dict[str, Any] = {} if overdue_s is None else {"overdue_s": overdue_s}
        if ids:
            params["ids"] = 1
        result: dict[str, dict[str, Any]] = self._call("GET", "/workers", **params)
        return result

    def set_faults(self, rules: list[str]) -> list[str]:
        """Replace the queue's fault rules; returns those now in force."""
        return list(self._call("PUT", "/faults", {"faults": rules})["faults"])

    def faults(self) -> list[str]:
        return list(self._call("GET", "/faults")["faults"])

    def events(self, cursor: int) -> tuple[list[dict[str, Any]], int]:
        """Every event from `cursor` on, paged."""
        events: list[dict[str, Any]] = []
        while True:
            page = self._call("GET", "/events", cursor=cursor, limit=EVENT_PAGE)
            events.extend(page["events"])
            cursor = int(page["next"])
            if len(page["events"]) < EVENT_PAGE:
                return events, cursor
