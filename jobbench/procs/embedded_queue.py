"""The embedded fake queue: its own process, so worker and driver CPU cannot stall its timers."""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from jobbench.errors import RunFailed
from jobbench.procs.spawn import popen_own_group, stop_group

READY_TIMEOUT_S = 20.0
STOP_GRACE_S = 5.0


@dataclass
class EmbeddedQueue:
    base_url: str
    endpoint_url: str
    process: subprocess.Popen[str]

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        stop_group(self.process, STOP_GRACE_S)
        if self.process.stdout is not None:
            self.process.stdout.close()


def start_embedded_queue(
    log_path: Path,
    endpoint_id: str = "local",
    seed: int | None = None,
    api_key: str | None = None,
    host: str = "127.0.0.1",  # loopback, unless workers on other machines must reach it
) -> EmbeddedQueue:
    argv = [
        sys.executable,
        "-m",
        "fake_queue",
        "--host",
        host,
        "--port",
        "0",
        "--endpoint-id",
        endpoint_id,
        "--ready-json",
    ]
    if seed is not None:
        argv += ["--seed", str(seed)]
    if api_key:
        argv.append(f"--api-key={api_key}")  # a key may begin with "-" (token_urlsafe)
    with log_path.open("wb") as log:  # the child keeps its own handle
        process = popen_own_group(
            argv, stdout=subprocess.PIPE, stderr=log, text=True, stdin=subprocess.DEVNULL
        )
    assert process.stdout is not None
    line = _read_line(process.stdout, READY_TIMEOUT_S)
    if not line:
        stop_group(process, grace_s=0)
        err = log_path.read_text(errors="replace")
        raise RunFailed(f"the embedded fake queue did not start: {err.strip()[-400:]}")
    ready = json.loads(line)
    return EmbeddedQueue(ready["url"], ready["endpoint_url"], process)


def _read_line(stream: object, timeout_s: float) -> str:
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)  # type: ignore[arg-type]
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if selector.select(timeout=deadline - time.monotonic()):
                return str(stream.readline())  # type: ignore[attr-defined]
        return ""
    finally:
        selector.close()
