"""Client of the fake queue's bench-control routes (/_bench/...)."""

from __future__ import annotations

from typing import Any

import httpx

from jobbench.errors import RunFailed, UsageError

EVENT_PAGE = 50_000


def split_server(server: str) -> tuple[str, str]:
    """(base URL, endpoint URL) from `--server http://A:8000` or `http://A:8000/v2/ID`."""
    url = server.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--server {server!r}: give the queue's URL, e.g. http://10.0.0.5:8000")
    base = url.split("/v2/")[0]
    return base, (url if "/v2/" in url else base + "/v2/local")


class BenchClient:
    def __init__(self, base_url: str, api_key: str | None = None, timeout_s: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout_s)

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, "/_bench" + path, **kwargs)
        except httpx.HTTPError as exc:
            raise RunFailed(
                f"fake queue at {self.base_url} is unreachable ({exc}); check --server "
                "and that the queue runs there"
            ) from None
        if response.status_code == 401:
            raise RunFailed(
                f"fake queue at {self.base_url} refused the API key (401); pass "
                "the key it was started with as --api-key"
            )
        if response.status_code >= 400:
            raise RunFailed(
                f"fake queue answered {response.status_code} to {path}: {response.text[:200]}"
            )
        return response.json()

    def set_latency(self, model: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self._call("PUT", "/latency", json=model)
        return result

    def reset(self) -> int:
        return int(self._call("POST", "/reset")["cursor"])

    def burst(self, count: int, inputs: list[Any]) -> dict[str, Any]:
        body: dict[str, Any] = (
            {"count": count, "input": inputs[0]}
            if len(inputs) == 1
            else {"count": count, "inputs": inputs}
        )
        result: dict[str, Any] = self._call("POST", "/burst", json=body)
        return result

    def state(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/state")
        return result

    def counts(self) -> dict[str, int]:
        """Jobs per status; cheap enough to poll while a rep runs."""
        result: dict[str, int] = self._call("GET", "/counts")["counts"]
        return result

    def workers(self) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = self._call("GET", "/workers")
        return result

    def events(self, cursor: int) -> tuple[list[dict[str, Any]], int]:
        """Every event from `cursor` on, paged."""
        events: list[dict[str, Any]] = []
        while True:
            page = self._call("GET", "/events", params={"cursor": cursor, "limit": EVENT_PAGE})
            events.extend(page["events"])
            cursor = int(page["next"])
            if len(page["events"]) < EVENT_PAGE:
                return events, cursor
