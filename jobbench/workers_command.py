"""`jobbench workers`: N worker processes polling a fake queue that runs elsewhere, until Ctrl-C.

A worker that dies is reported by name and ends the command (exit 4): nothing restarts silently.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from jobbench.config import WorkerSpec, validate_worker
from jobbench.errors import EXIT_OK, RunFailed, UsageError
from jobbench.interrupts import sigterm_as_interrupt
from jobbench.runner import READY_TIMEOUT_S, make_workdir
from jobbench.workers.kinds import check_take_ahead_support, sdk_info, worker_process_spec
from jobbench.workers.spawn import WorkerProcess, stop_all

CHECK_S = 0.25


@dataclass(frozen=True)
class WorkersRequest:
    server: str
    workers: int
    slots: int
    spec: WorkerSpec
    api_key: str | None = None
    name: str | None = None  # worker id prefix (default: host-pid)


def split_server(server: str) -> tuple[str, str]:
    """(base URL, endpoint URL) from `--server http://A:8000` or `http://A:8000/v2/ID`."""
    url = server.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--server {server!r}: give the queue's URL, e.g. http://10.0.0.5:8000")
    base = url.split("/v2/")[0]
    return base, (url if "/v2/" in url else base + "/v2/local")


def _check_queue(base: str, api_key: str | None) -> None:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        answer = httpx.get(base + "/_bench/workers", headers=headers, timeout=5.0)
    except httpx.HTTPError as exc:
        raise RunFailed(
            f"cannot reach the fake queue at {base} ({type(exc).__name__}); check --server "
            "and that `jobbench serve --host ...` runs there"
        ) from None
    if answer.status_code == 401:
        raise RunFailed(f"the fake queue at {base} refused the key (401); check --api-key")
    if answer.status_code != 200:
        raise RunFailed(f"{base} is not a jobbench fake queue ({answer.status_code} on /_bench)")


def _wait_polling(base: str, api_key: str | None, workers: list[WorkerProcess]) -> None:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        for worker in workers:
            worker.check_alive("exited before it started polling")
        with contextlib.suppress(httpx.HTTPError, ValueError):
            seen = httpx.get(base + "/_bench/workers", headers=headers, timeout=5.0).json()
            if all(seen.get(w.worker_id, {}).get("polling", 0) >= 1 for w in workers):
                return
        if time.monotonic() > deadline:
            raise RunFailed(f"workers did not poll {base} within {READY_TIMEOUT_S:.0f} s")
        time.sleep(0.1)


def spawn_workers(request: WorkersRequest, endpoint: str, workdir: Path) -> list[WorkerProcess]:
    prefix = request.name or f"{socket.gethostname().split('.')[0][:20]}-{os.getpid()}"
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    workers = []
    for index in range(request.workers):
        worker_id = f"{prefix}-w{index}"
        argv, env = worker_process_spec(
            request.spec, worker_id, endpoint, request.slots, request.api_key, home
        )
        worker = WorkerProcess(worker_id, argv, env, workdir / f"{worker_id}.log")
        workers.append(worker)
        worker.start()
    return workers


def workers_command(request: WorkersRequest) -> int:
    if request.workers < 1 or request.slots < 1:
        raise UsageError("--workers and --slots: must be whole numbers >= 1")
    validate_worker(request.spec)
    base, endpoint = split_server(request.server)
    if request.spec.kind == "runpod":
        check_take_ahead_support(request.spec, sdk_info(request.spec))
    _check_queue(base, request.api_key)
    workdir = make_workdir()
    workers: list[WorkerProcess] = []
    with sigterm_as_interrupt():
        try:
            workers = spawn_workers(request, endpoint, workdir)
            _wait_polling(base, request.api_key, workers)
            print(
                f"{len(workers)} x {request.spec.describe()} x {request.slots} slots polling "
                f"{endpoint} (ids {workers[0].worker_id}..); logs in {workdir}; Ctrl-C stops them",
                flush=True,
            )
            while True:
                time.sleep(CHECK_S)
                for worker in workers:
                    worker.check_alive()
        except KeyboardInterrupt:
            return EXIT_OK
        finally:
            stop_all(workers)
