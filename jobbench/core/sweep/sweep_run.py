"""A sweep run: every cell of the grid simulated in virtual time (core/sim/engine.py), on a pool of
processes when there are enough cells to pay for starting one, or as Ray tasks on a cluster
(`--cluster`), into the `jobbench.sweep/1` document. No clock is read: the same grid and seed
give the same document, bit for bit, wherever its cells ran."""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.pool
import signal
import statistics
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from jobbench import __version__
from jobbench.core.scenario.config import Scenario
from jobbench.core.sim.engine import simulate_rep
from jobbench.core.sweep.grid import Cell, Cells, Grid, cell_scenario, rerun_command
from jobbench.procs.ray_cluster import ClusterInfo
from jobbench.results.sweep_model import (
    SWEEP_FIGURES,
    SWEEP_SCHEMA,
    Sweep,
    SweepAxes,
    SweepCell,
    SweepFixed,
)


class SweepProgress(Protocol):
    def message(self, text: str) -> None: ...
    def steps_started(self, title: str, total: int) -> None: ...
    def rep_progress(self, done: int, total: int) -> None: ...
    def steps_finished(self) -> None: ...


INLINE_CELLS = 16  # fewer cells than this run in this process: a pool costs more than it saves
CHUNK = 8  # cells a pool process takes at once


def run_sweep(
    grid: Grid,
    cells: Cells,
    *,
    reps: int,
    seed: int | None,
    processes: int,
    progress: SweepProgress,
    cluster: ClusterInfo | None = None,
) -> Sweep:
    """The sweep's document; its cells on `processes` local processes, or with `cluster` as
    tasks on that cluster (this process connected to it), in the same order either way."""
    scenarios = [cell_scenario(cell, grid) for cell in cells.cells]  # every bad cell, first
    skipped = f", {cells.skipped:,} skipped (policy and take-ahead)" if cells.skipped else ""
    each = "1 rep" if reps == 1 else f"{reps} reps"
    progress.message(f"sweep: {len(scenarios):,} cells, {each} each, in virtual time{skipped}")
    progress.steps_started("sweep cells", len(scenarios))
    rows = []
    ran_on: Counter[str] = Counter()
    try:
        work = (
            _cluster_figures(scenarios, reps, seed, cluster, ran_on)
            if cluster is not None
            else _figures(scenarios, reps, seed, processes)
        )
        for done, (cell, figures) in enumerate(zip(cells.cells, work, strict=True), start=1):
            rows.append(SweepCell(**cell.axes(), **figures, command=rerun_command(cell, grid)))
            progress.rep_progress(done, len(scenarios))
    finally:
        progress.steps_finished()
    if cluster is not None:
        progress.message(nodes_line(cluster, ran_on))
    return Sweep(
        schema=SWEEP_SCHEMA,
        jobbench=__version__,
        reps=reps,
        seed=seed,
        axes=_axes(grid, cells.cells),
        fixed=SweepFixed(burst=grid.burst, hold=grid.hold, done_latency=grid.done_latency),
        skipped=cells.skipped,
        cells=rows,
    )


def cell_figures(scenario: Scenario, reps: int, seed: int | None) -> dict[str, Any]:
    """The sweep's figures of one cell: each the median over its reps (one rep: that rep's)."""
    runs = [
        simulate_rep(scenario, seed=seed, rep=rep, brief=True).measure.figures
        for rep in range(1, reps + 1)
    ]
    runs = [
        {
            **f,
            "takes_count": (f.get("takes") or {}).get("count"),
            "steady_e2e_p99_s": (f.get("steady") or {}).get("e2e_p99_s"),
            "fleet_worker_s": (f.get("fleet") or {}).get("worker_s"),
        }
        for f in runs
    ]
    return {name: _median([run.get(name) for run in runs]) for name in SWEEP_FIGURES}


def _cell(args: tuple[Scenario, int, int | None]) -> dict[str, Any]:
    return cell_figures(*args)


def _figures(
    scenarios: Sequence[Scenario], reps: int, seed: int | None, processes: int
) -> Iterator[dict[str, Any]]:
    work = [(scenario, reps, seed) for scenario in scenarios]
    if processes <= 1 or len(work) < INLINE_CELLS:
        yield from map(_cell, work)
        return
    with cell_pool(min(processes, len(work))) as pool:
        yield from pool.imap(_cell, work, chunksize=CHUNK)


def _cluster_figures(
    scenarios: Sequence[Scenario],
    reps: int,
    seed: int | None,
    cluster: ClusterInfo,
    ran_on: Counter[str],
) -> Iterator[dict[str, Any]]:
    """The cells in batches, each batch a Ray task running `_batch` (what a pool process does
    with its chunk); `ran_on` counts the cells each node ran."""
    from jobbench.procs.ray_tasks import IN_FLIGHT_PER_CPU, map_on_cluster

    work = [(scenario, reps, seed) for scenario in scenarios]
    size = cluster_batch(len(work), cluster.cpus * IN_FLIGHT_PER_CPU)
    batches = [work[start : start + size] for start in range(0, len(work), size)]
    for node, figures in map_on_cluster(_batch, batches, cpus=cluster.cpus):
        ran_on[node] += len(figures)
        yield from figures


def cluster_batch(cells: int, slots: float) -> int:
    """Cells a task takes: a task costs 5-40 ms on a busy 2-core machine, as much as a
    1024-job cell, so up to CHUNK cells go together, but never so many that the tasks fill
    fewer than the cluster's `slots` (its CPUs times the tasks in flight on each)."""
    return max(1, min(CHUNK, math.ceil(cells / max(slots, 1))))


def _batch(batch: list[tuple[Scenario, int, int | None]]) -> list[dict[str, Any]]:
    return [_cell(args) for args in batch]


def nodes_line(cluster: ClusterInfo, ran_on: Counter[str]) -> str:
    """Where the cells ran: each node's id (its first 8 hex digits, as `ray status` shows it),
    address and cells, so a cluster that kept work off a node says so."""
    ips = {node.node_id: node.ip for node in cluster.nodes}
    each = ", ".join(
        f"{node[:8]} {ips.get(node, '?')} ({count:,})" for node, count in sorted(ran_on.items())
    )
    nodes = f"{len(ran_on)} node{'s' if len(ran_on) != 1 else ''}"
    return f"sweep: cells ran on {nodes} of {cluster.address}: {each}"


def cell_pool(processes: int) -> multiprocessing.pool.Pool:
    """The pool the cells run on, its processes leaving stopping to the command."""
    context = multiprocessing.get_context(pool_start_method())
    return context.Pool(processes, initializer=_pool_process_signals)


def _pool_process_signals() -> None:
    """Ctrl-C reaches the whole foreground group: the command stops, then ends the pool with
    SIGTERM, which must only end a pool process (a forked one would inherit the command's
    SIGTERM handler, which raises KeyboardInterrupt: a traceback from each at every exit)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def pool_start_method() -> str:
    """fork where it is safe, a process with no thread but this one (a fork copies only the
    calling thread: a rich bar's refresh thread could be mid-write), so the pool's processes
    start with the simulator imported (spawn: ~0.35 s on a 2-core VM before the first cell);
    spawn otherwise."""
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


def _median(values: list[Any]) -> Any:
    known = [value for value in values if value is not None]
    if not known:
        return None
    middle = statistics.median(known)
    return round(middle) if all(isinstance(v, int) for v in known) else round(middle, 6)


def _axes(grid: Grid, cells: Sequence[Cell]) -> SweepAxes:
    """The values each axis took; policy's are those its cells ran (auto: drain, take-ahead)."""
    policies = list(dict.fromkeys(cell.policy for cell in cells))
    return SweepAxes(
        policy=policies,
        take_ahead=list(grid.take_aheads),
        workers=list(grid.workers),
        slots=list(grid.slots),
        job_seconds=list(grid.job_seconds),
        take_latency=list(grid.take_latencies),
        wake_latency=list(grid.wake_latencies),
        load=list(grid.load_values()),
        autoscale=list(grid.autoscale_values()),
    )
