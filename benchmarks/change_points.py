"""The error rates of `jobbench trend`'s change points, measured on real reps: resample the pools
of benchmarks/gate_pools.py into synthetic histories of the default suite's rows and count how
often jobbench/verdict/change_points.py `change_points` (the function `jobbench trend` calls on
each row) marks a commit where nothing changed, and how often it marks a planted step at its
commit.

    python benchmarks/change_points.py                      # docs/history.md's figures
    python benchmarks/change_points.py --histories 10 --aa-histories 50 --lengths 10

Each history is COMMITS commits of one row; each commit's reps (1, 3 or 5) are drawn from the
row's pool, quiet or beside a busy core with even odds, times the commit's level, and sorted out
as the trend sorts a commit's reps (trend.counted: the gate's rule). Cases:
- A/A: every commit at one level; every change point is false, counted per 100 commits (a change
  point can be at any commit but the first);
- planted steps, each a slowdown x(1 + s) or a speed-up x(1 - s) (5x: x5 or x1/5), half the
  histories one way first and half the other: one step in the middle, one after the first
  commit, one at the last commit, two close together (there and back two commits apart) and
  three close together (at m, m + 1 and m + 3: on, on, back). A step is found when a change
  point of its direction is at its commit (+-0); other marks are counted per 100 commits.
Intervals: Wilson 95 %. The gate's threshold (5 %) is trend's: a step of exactly 5 % is marked
when its estimate from the reps lands above it.

    python benchmarks/change_points.py --levels OUT/trends/runpod-history.json

`--levels` instead draws each row's histories at the levels of a saved trend (its document,
`jobbench trend --json`): commit i's reps are the pool's times the row's median at commit i
over its first, and each move of 20 % or more between neighbouring commits is a step to mark.
What a real history's steps would get were each commit's noise the pool's, at 1, 3 and 5 reps.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import machine, wilson

from jobbench.core.scenario.project import BUILTIN_SUITES, DEFAULT_SUITE
from jobbench.measure.stats import robust_spread
from jobbench.results.model import DEFAULT_METRIC
from jobbench.verdict.change_points import Point, Series, change_points, counted
from jobbench.verdict.decision import Rule

POOLS = Path(__file__).resolve().parent / "data" / "gate-pools-runpod.json"
POLICY = "runpod-1.12"
# Each size as (its name, the slowdown's factor, the speed-up's factor).
STEPS = (("5 %", 1.05, 0.95), ("10 %", 1.10, 0.90), ("25 %", 1.25, 0.75), ("5x", 5.0, 0.2))
PLACES = ("middle", "start", "end", "close pair", "close three")
Pool = list[list[float]]  # one row's gated metric per rep, [quiet, busy]


def planted(place: str, commits: int) -> list[tuple[int, bool]]:
    """Where the steps of a placement are, and whether each goes the history's first way (a
    step that does not goes back)."""
    middle = commits // 2
    return {
        "middle": [(middle, True)],
        "start": [(1, True)],
        "end": [(commits - 1, True)],
        "close pair": [(middle - 1, True), (middle + 1, False)],
        "close three": [(middle - 1, True), (middle, True), (middle + 2, False)],
    }[place]


@dataclass
class Tally:
    histories: int = 0
    places: int = 0  # commits a change point could be at: all but each history's first
    steps: int = 0
    found: int = 0
    other: int = 0  # change points at a commit where nothing was planted
    any_other: int = 0  # histories with at least one such


@dataclass
class Cell:
    row: str
    commits: int
    reps: int
    aa: Tally = field(default_factory=Tally)
    power: dict[tuple[str, str], Tally] = field(default_factory=dict)  # (step, place)


def draw(pool: Pool, rng: random.Random) -> float:
    """One rep: quiet or beside a busy core with even odds. A jitter of a millionth breaks the
    ties that drawing from a small pool with replacement makes, far below any row's noise."""
    return rng.choice(rng.choice(pool)) * (1 + rng.uniform(-1e-6, 1e-6))


def history(
    pool: Pool, metric: str, levels: Sequence[float], reps: int, rng: random.Random
) -> Series:
    rule = Rule()
    points = []
    for index, level in enumerate(levels):
        values = [draw(pool, rng) * level for _ in range(reps)]
        points.append(Point(index, tuple(counted(values, [None] * reps, metric, rule))))
    return Series("row", metric, tuple(points))


def marks(series: Series) -> dict[int, str]:
    """trend's change points of the series: commit -> direction."""
    return {p.index: p.direction for p in change_points(series, Rule().threshold)}


def run_cell(task: tuple[str, Pool, str, int, int, int, int, int]) -> Cell:
    row, pool, metric, commits, reps, aa_histories, histories, seed = task
    rng = random.Random(f"{seed}-{row}-{commits}-{reps}")
    cell = Cell(row, commits, reps)
    for _ in range(aa_histories):
        found = marks(history(pool, metric, [1.0] * commits, reps, rng))
        _count(cell.aa, commits, {}, found)
    for name, slower, faster in STEPS:
        for place in PLACES:
            tally = cell.power.setdefault((name, place), Tally())
            for h in range(histories):
                first, back = (slower, faster) if h % 2 == 0 else (faster, slower)
                steps = {at: first if way else back for at, way in planted(place, commits)}
                levels, level = [], 1.0
                for index in range(commits):
                    level *= steps.get(index, 1.0)
                    levels.append(level)
                found = marks(history(pool, metric, levels, reps, rng))
                _count(tally, commits, steps, found)
    return cell


def _count(tally: Tally, commits: int, steps: dict[int, float], found: dict[int, str]) -> None:
    tally.histories += 1
    tally.places += commits - 1
    tally.steps += len(steps)
    tally.found += sum(
        found.get(at) == ("slower" if factor > 1 else "faster") for at, factor in steps.items()
    )
    other = sum(1 for at in found if at not in steps)
    tally.other += other
    tally.any_other += other > 0


def share(hits: int, n: int) -> str:
    p, low, high = wilson(hits, n, 100.0)
    return f"{p:.0f} % [{low:.0f}, {high:.0f}]"


def per_100(hits: int, places: int) -> str:
    p, low, high = wilson(hits, places, 100.0)
    return f"{p:.2f} [{low:.2f}, {high:.2f}]"


def load_pools(path: Path) -> dict[str, tuple[str, Pool]]:
    """Each row of the default suite that the pools hold: its gated metric and its reps."""
    data: dict[str, Any] = json.loads(path.read_text())["pools"][POLICY]
    suite = BUILTIN_SUITES[DEFAULT_SUITE]
    pools = {}
    for scenario in suite.scenarios:
        if scenario.name not in data:
            continue
        metric = suite.metric_for(scenario.name) or DEFAULT_METRIC
        reps = data[scenario.name]
        pools[scenario.name] = (
            metric,
            [
                [float(rep[metric]) for rep in reps[kind]]
                for kind in ("quiet", "busy")
                if reps[kind]
            ],
        )
    return pools


BIG_STEP = 0.20  # a saved trend's moves counted as its steps (--levels)


def trend_levels(path: Path) -> dict[str, list[float]]:
    """Each row's median at each commit of a saved trend document that measured it, oldest
    first, over its first."""
    medians: dict[str, list[float]] = {}
    for commit in json.loads(path.read_text())["commits"]:
        for row, figures in commit["rows"].items():
            medians.setdefault(row, []).append(float(figures["median"]))
    return {row: [m / values[0] for m in values] for row, values in medians.items()}


def run_levels(
    task: tuple[str, Pool, str, list[float], int, int, int],
) -> tuple[str, int, Tally, Tally]:
    """A row's histories at a saved trend's levels: the moves of BIG_STEP or more, and those
    between the threshold and it, each marked at its commit or not; marks where the level
    moved within the threshold."""
    row, pool, metric, levels, reps, histories, seed = task
    rng = random.Random(f"{seed}-{row}-levels-{reps}")
    moves = {at: levels[at] / levels[at - 1] for at in range(1, len(levels))}
    big = {at: f for at, f in moves.items() if abs(f - 1) >= BIG_STEP}
    small = {at: f for at, f in moves.items() if Rule().threshold < abs(f - 1) < BIG_STEP}
    tallies = (Tally(), Tally())
    for _ in range(histories):
        found = marks(history(pool, metric, levels, reps, rng))
        for tally, steps, rest in ((tallies[0], big, small), (tallies[1], small, big)):
            _count(tally, len(levels), steps, {at: d for at, d in found.items() if at not in rest})
    return row, reps, *tallies


def print_levels(results: list[tuple[str, int, Tally, Tally]]) -> None:
    print("\n### A saved trend's levels: its moves marked at their commit [95 %]\n")
    print("| row | reps a commit | moves of 20 % or more | marked | moves of 5-20 % | marked "
          "| marks where it moved 5 % or less, per 100 commits |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for row, reps, big, small in results:
        print(f"| {row} | {reps} | {big.steps // big.histories} "
              f"| {share(big.found, big.steps) if big.steps else '-'} "
              f"| {small.steps // small.histories} "
              f"| {share(small.found, small.steps) if small.steps else '-'} "
              f"| {per_100(big.other, big.places)} |")  # fmt: skip


def print_tables(cells: list[Cell], lengths: Sequence[int]) -> None:
    print("\n### A/A: false change points per 100 commits\n")
    print("| row | commits | reps a commit | false change points per 100 commits [95 %] "
          "| histories with one or more |\n|---|---|---|---|---|")  # fmt: skip
    for c in cells:
        print(f"| {c.row} | {c.commits} | {c.reps} | {per_100(c.aa.other, c.aa.places)} "
              f"| {share(c.aa.any_other, c.aa.histories)} |")  # fmt: skip
    total = Tally()
    for c in cells:
        total.other += c.aa.other
        total.places += c.aa.places
    print(f"| every row | all | all | {per_100(total.other, total.places)} | |")
    for length in lengths:
        print(f"\n### Power, {length} commits: planted steps marked at their commit [95 %]\n")
        print("| row | reps a commit | step | " + " | ".join(PLACES)
              + " | other marks per 100 commits |\n|" + "---|" * (len(PLACES) + 4))  # fmt: skip
        for c in (c for c in cells if c.commits == length):
            for name, _, _ in STEPS:
                tallies = [c.power[(name, place)] for place in PLACES]
                other = sum(t.other for t in tallies)
                places = sum(t.places for t in tallies)
                print(f"| {c.row} | {c.reps} | {name} | "
                      + " | ".join(share(t.found, t.steps) for t in tallies)
                      + f" | {per_100(other, places)} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pools", type=Path, default=POOLS)
    parser.add_argument("--lengths", default="10,30", help="commits a history, comma-separated")
    parser.add_argument("--reps", default="1,3,5", help="reps a commit, comma-separated")
    parser.add_argument("--histories", type=int, default=20, help="per step, place and cell")
    parser.add_argument("--aa-histories", type=int, default=100, help="A/A histories per cell")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="processes")
    parser.add_argument("--levels", type=Path, help="a saved trend document: its rows' levels")
    args = parser.parse_args()
    began, cpu = time.monotonic(), time.process_time()
    print("## trend's change points on resampled real reps\n")
    print("`python " + " ".join(sys.argv) + "`\n")
    print("| machine | |\n|---|---|")
    for key, value in machine().items():
        print(f"| {key} | {value} |")
    source = json.loads(args.pools.read_text())
    print(f"\npools: {args.pools} ({source.get('command', '?')}; its machine's fake_queue "
          f"{source.get('machine', {}).get('fake_queue', '?')})\n")  # fmt: skip
    pools = load_pools(args.pools)
    print("| row | gated metric | reps (quiet + busy) | noise (robust spread) |\n|---|---|---|---|")
    for row, (metric, pool) in pools.items():
        every = [v for kind in pool for v in kind]
        print(f"| {row} | {metric} | {' + '.join(str(len(k)) for k in pool)} "
              f"| {robust_spread(every):.2%} |")  # fmt: skip
    lengths = [int(x) for x in args.lengths.split(",")]
    reps_list = [int(x) for x in args.reps.split(",")]
    with ProcessPoolExecutor(max_workers=args.workers) as workers:
        if args.levels is not None:
            levels = trend_levels(args.levels)
            jobs = [
                (row, pool, metric, levels[row], reps, args.histories, args.seed)
                for row, (metric, pool) in pools.items()
                if row in levels
                for reps in reps_list
            ]
            print(f"levels: {args.levels}, {args.histories} histories a row and reps")
            print_levels(list(workers.map(run_levels, jobs)))
        else:
            tasks = [
                (row, pool, metric, length, reps, args.aa_histories, args.histories, args.seed)
                for row, (metric, pool) in pools.items()
                for length in lengths
                for reps in reps_list
            ]
            print_tables(list(workers.map(run_cell, tasks)), lengths)
    children = os.times()
    print(f"\n{time.monotonic() - began:.0f} s wall, "
          f"{time.process_time() - cpu + children.children_user:.0f} s CPU")  # fmt: skip


if __name__ == "__main__":
    main()
