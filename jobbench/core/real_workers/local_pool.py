"""The fake target's workers on this machine: each a process group of its own, in its own
folder `workdir/<worker id>/` (cwd, TMPDIR, HOME) as in a container, pinned to the CPU plan's
worker CPUs (procs/worker_handle.py `WorkerPool`; a Ray cluster's is procs/ray_workers.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jobbench.procs.cpu_plan import pin
from jobbench.procs.disk_writes import group_write_bytes
from jobbench.procs.harness_cpu import group_cpu
from jobbench.procs.spawn import WorkerProcess, stop_all
from jobbench.procs.worker_handle import MakeSpec, Worker, WorkerPool
from jobbench.workers.kinds import worker_folder


@dataclass
class LocalPool:
    workdir: Path
    cpus: frozenset[int] | None = None

    def spawn(self, into: list[Worker], worker_ids: Sequence[str], make_spec: MakeSpec) -> None:
        for worker_id in worker_ids:
            folder = worker_folder(self.workdir, worker_id)
            argv, env = make_spec(worker_id, folder)
            log = self.workdir / f"{worker_id}.log"
            worker = WorkerProcess(worker_id, argv, env, log, cwd=folder)
            into.append(worker)
            worker.start()
            if self.cpus is not None and worker.popen is not None:
                pin(worker.popen.pid, self.cpus)  # what it forks later inherits this

    def stop_all(
        self, workers: Sequence[Worker], after_sigterm: Callable[[], None] | None = None
    ) -> None:
        stop_all([w for w in workers if isinstance(w, WorkerProcess)], after_sigterm)

    def cpu_seconds(self, workers: Sequence[Worker]) -> dict[str, float]:
        """Read from /proc in one pass; one that has exited is left out (its CPU since the
        last look is not read)."""
        return group_cpu(_running(workers))

    def write_bytes(self, workers: Sequence[Worker]) -> dict[str, int]:
        """Read from /proc in one pass, as the CPU; one that has exited, or cannot be read,
        is left out."""
        return group_write_bytes(_running(workers))

    def describe(self) -> None:
        return None

    def close(self) -> None:
        return None


def _running(workers: Sequence[Worker]) -> dict[str, int]:
    """Each running worker's process group (its leader's pid: it leads its own group)."""
    return {
        w.worker_id: w.popen.pid
        for w in workers
        if isinstance(w, WorkerProcess) and w.popen is not None and w.returncode() is None
    }


class LocalPools:
    """The default `PoolFactory`: every worker on this machine."""

    def room(self, bundles: Sequence[int]) -> int:
        """All of them: this machine's own load turns lanes off (core/run/lanes.py)."""
        return len(bundles)

    def open(
        self, workdir: Path, bundles: int, cpus: frozenset[int] | None, lane: str
    ) -> WorkerPool:
        return LocalPool(workdir, cpus)  # one machine: every lane's workers are here
