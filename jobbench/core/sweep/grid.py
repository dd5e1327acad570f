"""A sweep's grid: each axis a list or a range of values, read from the flag's text, and the
cells of their product, each a Scenario of the model worker and the `jobbench run` that runs it
for real. A policy and a take-ahead that do not go together (drain or sdk-1.12 with K > 0,
take-ahead with K = 0) are skipped, and counted; no valid cell at all is an error."""

from __future__ import annotations

import itertools
import math
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from jobbench.core.scenario.build import build_scenario
from jobbench.core.scenario.config import LatencyFlags, Scenario
from jobbench.core.scenario.fleet_spec import parse_autoscale
from jobbench.core.scenario.load_profiles import parse_load
from jobbench.core.scenario.worker import worker_spec
from jobbench.errors import UsageError
from jobbench.results.sweep_model import AXIS_NAMES
from jobbench.workers.policies import POLICIES, policy_for, take_ahead_problem

T = TypeVar("T")
MAX_AXIS_VALUES = 1000  # a range longer than this is a typo, not a sweep
MAX_CELLS = 100_000
AUTO_POLICY = "auto"  # no --policy: each take-ahead's own (drain for 0, take-ahead otherwise)
FIXED = "fixed"  # the fleet axis's value for all workers all along (no --autoscale)

# `A..B` (step 1), `A..B+S` (add S), `A..B*F` (multiply by F): both ends included.
_RANGE = re.compile(r"^(?P<lo>[^.+*]+(?:\.\d+)?)\.\.(?P<hi>[^+*]+)(?:(?P<op>[+*])(?P<step>.+))?$")
_FIX_INT = "write a list or a range, e.g. 1,2,4,8 or 8..32+8 or 1..64*2"
_FIX_SECONDS = "write a list or a range of seconds, e.g. 0.1,0.5,2 or 0.1..0.5+0.1"


@dataclass(frozen=True)
class Cell:
    """One point of the grid: every axis's value (latencies as written, e.g. `uniform:0.1,0.3`)."""

    policy: str
    take_ahead: int
    workers: int
    slots: int
    job_seconds: float
    take_latency: str
    wake_latency: str
    load: str  # `burst:N` (the grid's burst) or an arrival profile (core/scenario/load_profiles.py)
    # FIXED, or an --autoscale spec (core/scenario/fleet_spec.py): --workers is its max
    autoscale: str = FIXED

    def axes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in AXIS_NAMES}


@dataclass(frozen=True)
class Grid:
    """Every axis's values, and what all cells share."""

    policies: tuple[str, ...]  # (AUTO_POLICY,) when --policy was not given
    take_aheads: tuple[int, ...]
    workers: tuple[int, ...]
    slots: tuple[int, ...]
    job_seconds: tuple[float, ...]
    take_latencies: tuple[str, ...]
    wake_latencies: tuple[str, ...]
    loads: tuple[str, ...] = ()  # --load, each a profile; none: the burst
    autoscales: tuple[str, ...] = ()  # --autoscale, each a spec or "fixed"; none: fixed
    burst: int = 1024
    hold: str = "20"
    done_latency: str = "0"

    def size(self) -> int:
        return math.prod(len(values) for values in self.axis_values())

    def load_values(self) -> tuple[str, ...]:
        return self.loads or (f"burst:{self.burst}",)

    def autoscale_values(self) -> tuple[str, ...]:
        return self.autoscales or (FIXED,)

    def axis_values(self) -> tuple[Sequence[object], ...]:
        return (
            self.policies,
            self.take_aheads,
            self.workers,
            self.slots,
            self.job_seconds,
            self.take_latencies,
            self.wake_latencies,
            self.load_values(),
            self.autoscale_values(),
        )


@dataclass(frozen=True)
class Cells:
    cells: tuple[Cell, ...]
    skipped: int  # policy x take-ahead pairs that do not go together, times the other axes


def grid_cells(grid: Grid) -> Cells:
    """The valid cells of the grid, in axis order (the last axis varies fastest)."""
    if grid.size() > MAX_CELLS:
        raise UsageError(
            f"the grid has {grid.size():,} cells; sweep at most {MAX_CELLS:,} (fewer values)"
        )
    cells, skipped = [], 0
    for policy, k, workers, slots, job, take, wake, load, scale in itertools.product(
        grid.policies,
        grid.take_aheads,
        grid.workers,
        grid.slots,
        grid.job_seconds,
        grid.take_latencies,
        grid.wake_latencies,
        grid.load_values(),
        grid.autoscale_values(),
    ):
        chosen = policy_for(k) if policy == AUTO_POLICY else policy
        if take_ahead_problem(chosen, k) is not None:
            skipped += 1
            continue
        cells.append(Cell(chosen, k, workers, slots, job, take, wake, load, scale))
    if not cells:
        raise UsageError(
            "--policy/--take-ahead: no cell is valid (take-ahead and sdk-take-ahead take K > 0,"
            " the others K = 0); add --take-ahead 0 or a K > 0 that fits a policy"
        )
    return Cells(tuple(cells), skipped)


def cell_scenario(cell: Cell, grid: Grid) -> Scenario:
    """The cell as the model worker's scenario, built and checked as `jobbench run` builds its
    own (grid_cells kept only the cells whose policy and take-ahead go together)."""
    latency = LatencyFlags(cell.take_latency, cell.wake_latency, grid.hold, grid.done_latency)
    return build_scenario(
        workers=cell.workers,
        slots=cell.slots,
        burst=grid.burst,
        load=None if _is_grid_burst(cell, grid) else cell.load,
        job_seconds=cell.job_seconds,
        worker=worker_spec("model", cell.policy, cell.take_ahead, None, None),
        latency=latency.model(),
        autoscale=None if cell.autoscale == FIXED else cell.autoscale,
    )


def rerun_command(cell: Cell, grid: Grid) -> str:
    """The `jobbench run` that runs this cell for real, on the fake queue with model workers."""
    words = ["jobbench", "run", "--worker", "model", "--policy", cell.policy]
    words += ["--take-ahead", str(cell.take_ahead), "--workers", str(cell.workers)]
    load = ["--burst", str(grid.burst)] if _is_grid_burst(cell, grid) else ["--load", cell.load]
    words += ["--slots", str(cell.slots), *load]
    words += ["--job-seconds", seconds_text(cell.job_seconds), "--take-latency", cell.take_latency]
    words += ["--wake-latency", cell.wake_latency]
    if cell.autoscale != FIXED:
        words += ["--autoscale", cell.autoscale]
    if grid.hold != "20":
        words += ["--hold", grid.hold]
    if grid.done_latency != "0":
        words += ["--done-latency", grid.done_latency]
    return shlex.join(words)


def _is_grid_burst(cell: Cell, grid: Grid) -> bool:
    """The cell runs the grid's --burst, as every cell did before the load axis."""
    return cell.load == f"burst:{grid.burst}"


def load_axis(texts: Sequence[str]) -> tuple[str, ...]:
    """Each --load given: one arrival profile (its commas join stages, so repeat the flag for
    more values), checked now rather than at the first cell."""
    out = [text.strip() for text in texts]
    for spec in out:
        parse_load(spec)
    return _unique(out, "--load", " --load ".join(texts))


def autoscale_axis(texts: Sequence[str]) -> tuple[str, ...]:
    """Each --autoscale given: `fixed` or one spec (its commas are its keys', so repeat the
    flag for more values), checked now (with 1 max worker: the cells' own come later)."""
    out = [text.strip() for text in texts]
    for spec in out:
        if spec != FIXED:
            parse_autoscale(spec, max(1, _active_of(spec)))
    return _unique(out, "--autoscale", " --autoscale ".join(texts))


def _active_of(spec: str) -> int:
    found = re.search(r"(?:^|,)\s*active\s*=\s*(\d+)", spec)
    return int(found[1]) if found else 0


def seconds_text(value: float) -> str:
    """`0.5`, `2`, `0.123456789`: short, and read back as the same float."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def whole_axis(text: str, flag: str, least: int) -> tuple[int, ...]:
    """`1,2,4,8`, `8..32+8` or `1..64*2` as whole numbers, each at least `least`."""
    values = tuple(int(v) for v in _axis(text, flag, _FIX_INT, _whole))
    low = next((v for v in values if v < least), None)
    if low is not None:
        raise UsageError(f"{flag} {text}: {low} is below {least}; use values of {least} or more")
    return values


def seconds_axis(text: str, flag: str) -> tuple[float, ...]:
    """`0.1,0.5,2` or `0.1..0.5+0.1` as seconds, each above 0."""
    values = _axis(text, flag, _FIX_SECONDS, float)
    if any(not math.isfinite(v) or v <= 0 for v in values):
        raise UsageError(f"{flag} {text}: use seconds above 0, e.g. 0.1,0.5,2")
    return tuple(values)


def latency_axis(texts: Sequence[str], flag: str) -> tuple[str, ...]:
    """Each --take-latency/--wake-latency given: a list or range of seconds, or one sampled
    latency (`uniform:0.1,0.3`: its comma is the distribution's, so repeat the flag for more)."""
    out: list[str] = []
    for text in texts:
        if ":" in text:
            out.append(text.strip())
            continue
        values = _axis(text, flag, _FIX_SECONDS, float)
        if any(not math.isfinite(v) or v < 0 for v in values):
            raise UsageError(f"{flag} {text}: use seconds of 0 or more, e.g. 0.1,0.5")
        out.extend(seconds_text(v) for v in values)
    for spec in out:  # a bad distribution is named now, not at the first cell
        flags = LatencyFlags(take=spec) if flag == "--take-latency" else LatencyFlags(wake=spec)
        flags.model()
    return _unique(out, flag, ",".join(texts))


def policy_axis(text: str | None) -> tuple[str, ...]:
    if text is None:
        return (AUTO_POLICY,)
    names = [name.strip() for name in text.split(",")]
    unknown = [name for name in names if name not in POLICIES]
    if unknown:
        raise UsageError(f"--policy {text}: {unknown[0]!r} is none; use {', '.join(POLICIES)}")
    return _unique(names, "--policy", text)


def _whole(text: str) -> float:
    value = float(text)
    if not value.is_integer():
        raise ValueError(text)
    return value


def _axis(text: str, flag: str, fix: str, read: Callable[[str], float]) -> tuple[float, ...]:
    values: list[float] = []
    try:
        for part in text.split(","):
            values.extend(_part(part.strip(), read))
    except (ValueError, OverflowError):
        raise UsageError(f"{flag} {text}: {fix}") from None
    if len(values) > MAX_AXIS_VALUES:
        raise UsageError(f"{flag} {text}: {len(values):,} values; use at most {MAX_AXIS_VALUES}")
    return _unique(values, flag, text)


def _part(part: str, read: Callable[[str], float]) -> list[float]:
    match = _RANGE.match(part)
    if match is None:
        return [read(part)]
    lo, hi = read(match["lo"]), read(match["hi"])
    op, step = match["op"] or "+", read(match["step"] or "1")
    grows = step > 0 if op == "+" else step > 1
    if hi < lo or not grows or (op == "*" and lo <= 0):
        raise ValueError(part)
    values: list[float] = []
    value = lo
    while value <= hi * (1 + 1e-9) and len(values) <= MAX_AXIS_VALUES:
        values.append(round(value, 9))
        value = lo + step * len(values) if op == "+" else value * step
    return values


def _unique(values: Sequence[T], flag: str, text: str) -> tuple[T, ...]:
    if len(set(values)) != len(values):
        raise UsageError(f"{flag} {text}: a value is given twice; give each once")
    return tuple(values)
