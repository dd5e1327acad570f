"""The seam between the fake target and where its worker processes run: a `Worker` is
one worker process as the runner sees it, started here (procs/spawn.py `WorkerProcess`) or on a
Ray cluster's node (procs/ray_workers.py `ClusterWorker`); a `WorkerPool` starts, stops and reads
the CPU and disk writes of a scenario's workers, and a `PoolFactory` opens one pool per
scenario. core/real_workers/ speaks only these, so it never learns Ray."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

# A worker's argv and env, made once its folder is known (the folder is on the worker's node).
MakeSpec = Callable[[str, Path], tuple[list[str], dict[str, str]]]


class Worker(Protocol):
    @property
    def worker_id(self) -> str: ...

    @property
    def log_path(self) -> Path: ...  # here, on the driver: a cluster worker's once collected

    @property
    def cwd(self) -> Path | None: ...  # its folder here (a cluster worker's once collected)

    @property
    def node(self) -> str | None: ...  # "node ID (IP)" on a cluster; None for a local one

    def returncode(self) -> int | None: ...

    def stderr_tail(self) -> str: ...

    def check_alive(self, what: str = "died") -> None: ...

    def stop(self, grace_s: float = ...) -> None: ...

    def signal(self, sig: int) -> None: ...  # to its whole process group


class WorkerPool(Protocol):
    def spawn(self, into: list[Worker], worker_ids: Sequence[str], make_spec: MakeSpec) -> None:
        """Start one worker per id, each appended to `into` before it starts, so the caller's
        cleanup stops every one started even if a later start fails or is interrupted."""

    def stop_all(
        self, workers: Sequence[Worker], after_sigterm: Callable[[], None] | None = None
    ) -> None:
        """SIGTERM all, `after_sigterm()`, one shared grace, then SIGKILL what is left."""

    def cpu_seconds(self, workers: Sequence[Worker]) -> dict[str, float]:
        """Each running worker's process group's CPU seconds (procs/harness_cpu.py)."""

    def write_bytes(self, workers: Sequence[Worker]) -> dict[str, int]:
        """Each running worker's process group's bytes written to storage, where they can be
        read (procs/disk_writes.py): a worker left out has no figure, never 0."""

    def describe(self) -> dict[str, Any] | None:
        """What the result's `environment` says of where the workers ran (None: here)."""

    def close(self) -> None:
        """After `stop_all`: whatever the pool holds besides its workers, released."""


class PoolFactory(Protocol):
    def room(self, bundles: Sequence[int]) -> int:
        """How many pools of these sizes (each its `bundles`) can be open at once, the largest
        together: the lanes a run may have (core/run/lanes.py)."""
        ...

    def open(
        self, workdir: Path, bundles: int, cpus: frozenset[int] | None, lane: str
    ) -> WorkerPool:
        """A scenario's pool: `bundles` workers at most at once (a fleet's max), their folders
        and logs in `workdir`, pinned to `cpus` where the pool runs them here. The pools of
        one `lane` (a row: its baseline's and its candidate's) put their N-th workers in one
        place, so the two sides of a comparison run on the same machines."""
