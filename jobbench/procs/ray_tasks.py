"""A function mapped over items as Ray tasks on the cluster this process is connected to
(procs/ray_cluster.py `connect`), its results in the items' order, as `map` gives them.

A few tasks per CPU are in flight at once, not all: a grid may hold 100,000 cells, and each task
submitted is the driver's to track. Whatever ends the iteration early (Ctrl-C, SIGTERM, a
task's error, a caller that stops reading) cancels the tasks still outstanding, forcing their
worker processes to stop, so nothing of ours keeps running on any node. A task whose node dies
runs again on another (Ray's retries): the function must give the same result wherever and
however often it runs."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import Any, TypeVar

from jobbench.errors import RunFailed
from jobbench.procs.ray_cluster import import_ray
from jobbench.procs.signals import interrupts_deferred

T = TypeVar("T")
R = TypeVar("R")

IN_FLIGHT_PER_CPU = 4  # enough queued on each CPU that none waits for the driver between tasks
MAX_RETRIES = 3  # runs of a task lost with its node or worker process, after the first
# Each task on the least loaded node: Ray's default fills the driver's node first, and short
# tasks finish there before another node's workers have started, leaving that node idle.
SPREAD = "SPREAD"


def map_on_cluster(
    fn: Callable[[T], R], items: Sequence[T], *, cpus: float
) -> Iterator[tuple[str, R]]:
    """`fn` over `items`, each a Ray task of one CPU, yielded in order with the node (Ray's node
    id) that gave the result. `fn` must be importable by name on every node (a module-level
    function of a package installed there)."""
    ray = import_ray()
    remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, scheduling_strategy=SPREAD)(_on_node)
    window = max(1, int(cpus * IN_FLIGHT_PER_CPU))
    waiting = iter(items)
    pending: deque[Any] = deque()
    lost = _lost_errors(ray)
    try:
        pending.extend(remote.remote(fn, item) for item in islice(waiting, window))
        done = 0
        while pending:
            try:
                node, result = ray.get(pending[0])
            except lost as exc:
                raise RunFailed(
                    f"--cluster: task {done + 1} of {len(items)} was lost: {exc}"
                ) from None
            pending.popleft()
            done += 1
            pending.extend(remote.remote(fn, item) for item in islice(waiting, 1))
            yield node, result
    finally:
        with interrupts_deferred(redeliver=False):  # the caller is ending anyway
            for ref in pending:
                ray.cancel(ref, force=True)


def _on_node(fn: Callable[[T], R], item: T) -> tuple[str, R]:
    """Runs in the task: the node it ran on, beside `fn`'s result."""
    ray = import_ray()
    return ray.get_runtime_context().get_node_id(), fn(item)


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Ray's errors for a task that could not finish (its retries spent on dead nodes or worker
    processes), apart from the task's own exception, which ray.get raises as itself."""
    errors = ray.exceptions
    return (
        errors.WorkerCrashedError,
        errors.NodeDiedError,
        errors.ObjectLostError,
        errors.RaySystemError,
    )
