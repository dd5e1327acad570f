"""`jobbench workers`: N worker processes polling a fake queue that runs elsewhere, until Ctrl-C
or SIGTERM, which stop them all and exit 130 as for every command.

A worker that dies is reported by name and ends the command (exit 4): nothing restarts silently.
One that asks for a refresh (refresh_worker) is stopped and started afresh, as RunPod does, and
says so (core/fake/refresh_drive.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NoReturn

from jobbench.clients.bench_client import BenchClient, check_endpoint, split_server
from jobbench.core.real_workers.fake_target import (
    make_workdir,
    ready_worker,
    wait_until_polling,
)
from jobbench.core.real_workers.local_pool import LocalPool
from jobbench.core.real_workers.refresh_drive import Refreshes
from jobbench.core.scenario.checks import check_fleet_sizes, check_memory
from jobbench.errors import RunFailed, name_kept_logs
from jobbench.procs.signals import interrupts_deferred, sigterm_as_interrupt
from jobbench.procs.worker_handle import Worker
from jobbench.workers.kinds import worker_process_spec
from jobbench.workers.spec import WorkerSpec

CHECK_S = 0.25


@dataclass(frozen=True)
class WorkersRequest:
    server: str
    workers: int
    slots: int
    spec: WorkerSpec
    api_key: str | None = None
    name: str | None = None  # worker id prefix (default: host-pid)


def worker_ids(request: WorkersRequest) -> list[str]:
    prefix = request.name or f"{socket.gethostname().split('.')[0][:20]}-{os.getpid()}"
    return [f"{prefix}-w{index}" for index in range(request.workers)]


def workers_command(request: WorkersRequest) -> NoReturn:
    """Until a worker dies (RunFailed, exit 4) or Ctrl-C / SIGTERM (KeyboardInterrupt, 130)."""
    check_fleet_sizes(request.workers, request.slots)  # the spec was checked as it was read
    check_memory(request.workers, request.spec.kind, burst=0)  # the queue runs elsewhere
    base, endpoint = split_server(request.server)
    client = BenchClient(base, request.api_key, timeout_s=5.0)
    try:
        client.workers()  # reachable, the key accepted, a jobbench fake queue
        check_endpoint(client, request.server)  # the one the workers will poll
        request = replace(request, spec=ready_worker(request.spec, _say).spec)  # its SDK's env
    except BaseException:
        client.close()
        raise
    workers: list[Worker] = []  # filled as they start: cleanup must see each one
    workdir = make_workdir()
    failed = False  # a worker failed: its logs stay and the error says where
    with sigterm_as_interrupt():
        try:
            _run_workers(request, client, endpoint, workers, workdir)
        except RunFailed as exc:
            failed = bool(workers)
            if failed:
                name_kept_logs(exc, [str(workdir)])
            raise
        finally:
            # Ending either way (Ctrl-C is how it ends): a second one just waits for this.
            with interrupts_deferred(redeliver=False), contextlib.ExitStack() as later:
                if not failed:
                    later.callback(shutil.rmtree, workdir, ignore_errors=True)
                later.callback(client.close)
                LocalPool(workdir).stop_all(workers)


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _run_workers(
    request: WorkersRequest,
    client: BenchClient,
    endpoint: str,
    workers: list[Worker],
    workdir: Path,
) -> NoReturn:
    ids = worker_ids(request)

    spec, slots, key = request.spec, request.slots, request.api_key

    def make_spec(worker_id: str, folder: Path) -> tuple[list[str], dict[str, str]]:
        return worker_process_spec(spec, worker_id, endpoint, slots, key, folder)

    def spawn(into: list[Worker], names: list[str]) -> None:
        LocalPool(workdir).spawn(into, names, make_spec)

    spawn(workers, ids)
    wait_until_polling(client, workers, workdir)
    print(
        f"{len(workers)} x {request.spec.describe()} x {request.slots} slots polling "
        f"{endpoint} (ids {ids[0]}..); logs in {workdir}; Ctrl-C stops them",
        flush=True,
    )
    refreshes = Refreshes(client, [workers], spawn)  # refresh_worker, as the platform does it
    while True:
        time.sleep(CHECK_S)
        for line in refreshes.look(client.workers(), time.monotonic()):
            _say(line)
        refreshes.check_alive(workers)
