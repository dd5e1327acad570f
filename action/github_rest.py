"""The few GitHub REST calls the action makes, with urllib: the token goes only to the API's own
address (GITHUB_API_URL, which a test points at a loopback server), and every failure is one
ApiError naming the call."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

TIMEOUT_S = 30
PAGE = 100  # the most the API gives a page
MAX_PAGES = 50  # 5,000 comments: a bound on a loop that follows the server's links


class ApiError(Exception):
    def __init__(self, call: str, status: int | None, detail: str) -> None:
        self.status = status
        said = f"HTTP {status}" if status is not None else "no answer"
        super().__init__(f"{call}: {said} ({detail})")


class GitHubApi:
    def __init__(self, base_url: str, token: str, repository: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.repo_path = f"/repos/{repository}"

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """`path` under /repos/OWNER/NAME; the parsed JSON answer."""
        answer, _ = self._send(method, self.base_url + self.repo_path + path, body)
        return answer

    def pages(self, path: str) -> Iterator[Any]:
        """Every item of a listing, following the `Link: <...>; rel="next"` pages."""
        url: str | None = f"{self.base_url}{self.repo_path}{path}?per_page={PAGE}"
        for _ in range(MAX_PAGES):
            if url is None:
                return
            items, headers = self._send("GET", url, None)
            yield from items if isinstance(items, list) else []
            url = self._next(headers.get("Link", ""))

    def _next(self, link: str) -> str | None:
        for part in link.split(","):
            target, _, rel = part.partition(";")
            if 'rel="next"' in rel:
                url = target.strip().strip("<>")
                # The token is sent with the next request: only to the API it came from.
                return url if url.startswith(self.base_url + "/") else None
        return None

    def _send(
        self, method: str, url: str, body: dict[str, Any] | None
    ) -> tuple[Any, dict[str, str]]:
        call = f"{method} {url.removeprefix(self.base_url)}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("X-GitHub-Api-Version", "2022-11-28")
        request.add_header("User-Agent", "jobbench-action")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                text = response.read().decode("utf-8")
                headers = dict(response.headers.items())
        except urllib.error.HTTPError as err:
            raise ApiError(call, err.code, _message(err)) from err
        except (urllib.error.URLError, OSError) as err:
            raise ApiError(call, None, str(getattr(err, "reason", err))) from err
        try:
            return (json.loads(text) if text else None), headers
        except ValueError as err:
            raise ApiError(call, None, f"the answer is not JSON: {text[:80]!r}") from err


def _message(err: urllib.error.HTTPError) -> str:
    """The API's own `message` where it gave one."""
    try:
        said = json.loads(err.read().decode("utf-8"))
    except (OSError, ValueError):
        return err.reason if isinstance(err.reason, str) else "no message"
    return str(said.get("message", "no message")) if isinstance(said, dict) else "no message"
