"""A sweep run: every cell of the grid simulated in virtual time (core/sim/engine.py), on a pool of
processes when there are enough cells to pay for starting one, into the `jobbench.sweep/1`
document. No clock is read: the same grid and seed give the same document, bit for bit."""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import signal
import statistics
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from jobbench import __version__
from jobbench.core.scenario.config import Scenario
from jobbench.core.sim.engine import simulate_rep
from jobbench.core.sweep.grid import Cell, Cells, Grid, cell_scenario, rerun_command
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
) -> Sweep:
    scenarios = [cell_scenario(cell, grid) for cell in cells.cells]  # every bad cell, first
    skipped = f", {cells.skipped:,} skipped (policy and take-ahead)" if cells.skipped else ""
    each = "1 rep" if reps == 1 else f"{reps} reps"
    progress.message(f"sweep: {len(scenarios):,} cells, {each} each, in virtual time{skipped}")
    progress.steps_started("sweep cells", len(scenarios))
    rows = []
    try:
        work = _figures(scenarios, reps, seed, processes)
        for done, (cell, figures) in enumerate(zip(cells.cells, work, strict=True), start=1):
            rows.append(SweepCell(**cell.axes(), **figures, command=rerun_command(cell, grid)))
            progress.rep_progress(done, len(scenarios))
    finally:
        progress.steps_finished()
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
