"""A sweep as text: the CSV (one row per cell: its axes, its figures, the command that runs it
for real) and the terminal summary (the best and the worst cells), both plain, no rich."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import TextIO

from jobbench.results.sweep_model import AXIS_NAMES, SWEEP_FIGURES, Sweep, SweepCell

CSV_COLUMNS = (*AXIS_NAMES, *SWEEP_FIGURES, "command")


def sweep_csv(sweep: Sweep) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for cell in sweep.cells:
        row = cell.model_dump()
        writer.writerow(["" if row[name] is None else row[name] for name in CSV_COLUMNS])
    return out.getvalue()


def render_summary(sweep: Sweep, stream: TextIO, saved: str) -> None:
    """What ran, then per figure the best and the worst cell, each with its re-run command."""
    skipped = f", {sweep.skipped:,} skipped (policy and take-ahead)" if sweep.skipped else ""
    print(
        f"sweep: {len(sweep.cells):,} cells{skipped}, {count(sweep.reps, 'rep')} each, burst "
        f"{sweep.fixed.burst}, simulated (virtual time)",
        file=stream,
    )
    for name, title, lower_is_better, show in _RANKED:
        ranked = [cell for cell in sweep.cells if cell.figure(name) is not None]
        if not ranked:
            continue
        ranked.sort(key=lambda cell: (cell.figure(name) or 0.0) * (1 if lower_is_better else -1))
        for word, cell in (("best", ranked[0]), ("worst", ranked[-1])):
            print(
                f"{word} {title}: {show(cell.figure(name) or 0.0)}  {describe(cell)}", file=stream
            )
            print(f"  {cell.command}", file=stream)
    print(f"saved: {saved}", file=stream)


def describe(cell: SweepCell) -> str:
    """`take-ahead K 8, 4 workers x 32 slots, jobs 0.5 s, take 0.5 s, wake 0.05 s`."""
    k = f" K {cell.take_ahead}" if cell.take_ahead else ""
    load = f", load {cell.load}" if cell.load else ""
    if cell.autoscale and cell.autoscale != "fixed":
        load += f", autoscaled {cell.autoscale}"
    return (
        f"{cell.policy}{k}, {count(cell.workers, 'worker')} x {count(cell.slots, 'slot')}, jobs "
        f"{float(cell.job_seconds):g} s, take {cell.take_latency} s, wake {cell.wake_latency} s"
        f"{load}"
    )


def count(n: int, word: str) -> str:
    """`1 worker`, `4 workers`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _seconds(value: float) -> str:
    return f"{value:.3f} s"


def _percent(value: float) -> str:
    return f"{value:.1%}"


_RANKED: tuple[tuple[str, str, bool, Callable[[float], str]], ...] = (
    ("time_to_p99_s", "time to 99 %", True, _seconds),
    ("efficiency", "efficiency", False, _percent),
    ("steady_e2e_p99_s", "steady e2e p99", True, _seconds),
)
