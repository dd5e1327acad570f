"""`jobbench workers`: N worker processes polling a fake queue that runs elsewhere, until Ctrl-C.

A worker that dies is reported by name and ends the command (exit 4): nothing restarts silently.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from jobbench.config import WorkerSpec, validate_worker
from jobbench.drive.bench_client import BenchClient, split_server
from jobbench.errors import EXIT_OK, UsageError
from jobbench.interrupts import sigterm_as_interrupt
from jobbench.runner import make_workdir, wait_until_polling
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
    client = BenchClient(base, request.api_key, timeout_s=5.0)
    workers: list[WorkerProcess] = []
    with sigterm_as_interrupt():
        try:
            client.workers()  # reachable, the key accepted, a jobbench fake queue: then spawn
            workdir = make_workdir()
            workers = spawn_workers(request, endpoint, workdir)
            wait_until_polling(client, workers, workdir)
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
            client.close()
