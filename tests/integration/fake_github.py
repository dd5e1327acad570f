"""A stand-in for api.github.com on a loopback port, and a runner's environment around it, so
the action's steps run as on GitHub: an event file, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and
GITHUB_PATH files, and GITHUB_API_URL pointing here. The server keeps comments, labels and pull
requests as GitHub does and records every request it answered."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.integration.workflow import ACTION, ROOT, load, run_script, step

REPO = "runpod/runpod-python"
TOKEN = "test-token"
BOT = {"type": "Bot", "login": "github-actions[bot]"}
HUMAN = {"type": "User", "login": "reviewer"}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    authorization: str | None
    body: Any


@dataclass
class FakeGitHub:
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    labels: dict[int, list[str]] = field(default_factory=dict)
    heads: dict[int, str] = field(default_factory=dict)  # PR number -> head sha
    refuse: dict[str, int] = field(default_factory=dict)  # "METHOD" -> status to answer
    requests: list[Request] = field(default_factory=list)
    url: str = ""
    next_id: int = 1000

    def calls(self, method: str | None = None) -> list[Request]:
        return [r for r in self.requests if method is None or r.method == method]

    def add_comment(self, number: int, user: dict[str, str], body: str) -> int:
        self.next_id += 1
        self.comments.setdefault(number, []).append(
            {"id": self.next_id, "user": user, "body": body}
        )
        return self.next_id


def _handler(state: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    prefix = f"/repos/{REPO}"

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            del format, args

        def _answer(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            split = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            auth = self.headers.get("Authorization")
            state.requests.append(
                Request(self.command, split.path, parse_qs(split.query), auth, body)
            )
            if auth != f"Bearer {TOKEN}":
                return self._answer(401, {"message": "Bad credentials"})
            if self.command in state.refuse:
                status = state.refuse[self.command]
                return self._answer(status, {"message": "Resource not accessible by integration"})
            if not split.path.startswith(prefix + "/"):
                return self._answer(404, {"message": "Not Found"})
            self._route(split.path[len(prefix) :], parse_qs(split.query), body)

        def _route(self, path: str, query: dict[str, list[str]], body: Any) -> None:
            listed = re.fullmatch(r"/issues/(\d+)/(comments|labels)", path)
            if listed and self.command == "GET":
                number, what = int(listed[1]), listed[2]
                items: list[Any] = (
                    state.comments.get(number, [])
                    if what == "comments"
                    else [{"name": name} for name in state.labels.get(number, [])]
                )
                return self._page(path, query, items)
            if listed and self.command == "POST" and listed[2] == "comments":
                made = state.add_comment(int(listed[1]), BOT, body["body"])
                return self._answer(201, {"id": made, "html_url": f"{state.url}/c/{made}"})
            edited = re.fullmatch(r"/issues/comments/(\d+)", path)
            if edited and self.command == "PATCH":
                for comments in state.comments.values():
                    for comment in comments:
                        if comment["id"] == int(edited[1]):
                            comment["body"] = body["body"]
                            return self._answer(200, {**comment, "html_url": f"{state.url}/c/1"})
                return self._answer(404, {"message": "Not Found"})
            pull = re.fullmatch(r"/pulls/(\d+)", path)
            if pull and self.command == "GET" and int(pull[1]) in state.heads:
                number = int(pull[1])
                return self._answer(200, {"number": number, "head": {"sha": state.heads[number]}})
            return self._answer(404, {"message": "Not Found"})

        def _page(self, path: str, query: dict[str, list[str]], items: list[Any]) -> None:
            per_page = int(query.get("per_page", ["30"])[0])
            page = int(query.get("page", ["1"])[0])
            chunk = items[(page - 1) * per_page : page * per_page]
            headers = {}
            if page * per_page < len(items):
                link = f"{state.url}/repos/{REPO}{path}?per_page={per_page}&page={page + 1}"
                headers["Link"] = f'<{link}>; rel="next"'
            self._answer(200, chunk, headers)

        do_GET = do_POST = do_PATCH = _handle

    return Handler


def serve() -> Iterator[FakeGitHub]:
    """The fake API on 127.0.0.1, for the test's length (a generator for a fixture)."""
    state = FakeGitHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def pr_event(
    number: int = 42,
    labels: tuple[str, ...] = (),
    fork: bool = False,
    base: str = "1" * 40,
    head: str = "2" * 40,
) -> dict[str, Any]:
    head_repo = "someone/runpod-python" if fork else REPO
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "labels": [{"name": name} for name in labels],
            "base": {"sha": base, "ref": "main", "repo": {"full_name": REPO}},
            "head": {"sha": head, "ref": "feature", "repo": {"full_name": head_repo}},
        },
    }


@dataclass
class Runner:
    """One job's runner: its temp folder and workspace, the event, and the files steps write."""

    root: Path
    api: str
    event: dict[str, Any]
    token: str = TOKEN
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)  # step id -> outputs

    @property
    def temp(self) -> Path:
        return self.root / "runner-temp"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def summary(self) -> Path:
        return self.root / "step-summary.md"

    @property
    def path_file(self) -> Path:
        return self.root / "github-path"

    @property
    def bin(self) -> Path:
        """What actions/setup-python puts first on PATH: `python` (and `python3`), here the
        tests' own interpreter."""
        folder = self.root / "python-bin"
        if not folder.exists():
            folder.mkdir(parents=True)
            for name in ("python", "python3"):
                wrapper = folder / name
                wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
                wrapper.chmod(0o755)
        return folder

    def env(self, output_file: Path) -> dict[str, str]:
        for folder in (self.temp, self.workspace):
            folder.mkdir(parents=True, exist_ok=True)
        event_file = self.root / "event.json"
        event_file.write_text(json.dumps(self.event))
        return {
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "pull_request" if "pull_request" in self.event else "push",
            "GITHUB_EVENT_PATH": str(event_file),
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_PATH": str(self.path_file),
            "GITHUB_API_URL": self.api,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_RUN_ID": "77",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_ACTION_PATH": str(ROOT),
            "RUNNER_TEMP": str(self.temp),
            "RUNNER_OS": "Linux",
            "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
        }

    def run(
        self,
        name: str,
        inputs: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        action: Path = ACTION,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """Action `action`'s step `name` with these inputs (the action's defaults for the rest)
        and earlier steps' outputs filling its `env:` as the runner would; its outputs kept
        under its id."""
        found = step(name, action)
        values = {**defaults(action), **(inputs or {})}
        resolved = {k: self._resolve(str(v), values) for k, v in (found.get("env") or {}).items()}
        output_file = self.root / f"output-{found.get('id', 'step')}"
        output_file.write_text("")
        if action != ACTION:  # the nested actions find the scripts one folder up
            resolved.setdefault("GITHUB_ACTION_PATH", str(action.parent))
        done = run_script(
            found,
            self.workspace,
            {**self.env(output_file), **resolved, **(env or {})},
            timeout,
        )
        if "id" in found:
            self.outputs[found["id"]] = read_outputs(output_file)
        return done

    def _resolve(self, text: str, inputs: dict[str, str]) -> str:
        def value(match: re.Match[str]) -> str:
            expression = match[1].strip()
            if expression.startswith("inputs."):
                return self._resolve(inputs[expression[len("inputs.") :]], inputs)
            if expression == "github.token":
                return self.token
            found = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
            assert found, f"the fake runner cannot evaluate ${{{{ {expression} }}}}"
            return self.outputs.get(found[1], {}).get(found[2], "")

        return re.sub(r"\$\{\{(.*?)\}\}", value, text)


def defaults(action: Path) -> dict[str, str]:
    return {
        name: str(spec.get("default", ""))
        for name, spec in (load(action).get("inputs") or {}).items()
    }


def read_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT's `name=value` lines and `name<<DELIMITER` blocks, as the runner reads them."""
    outputs: dict[str, str] = {}
    lines = path.read_text().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
        i += 1
    return outputs


def annotations(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("::")]
