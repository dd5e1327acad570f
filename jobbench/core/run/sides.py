"""A compare or gate call's sides, from the names on its command line to the results it judges:
both names resolved (a saved result or a variant to run, resolve.py), the variants a suite sets
beside them (docs/fixes.md), every pairing of scenarios checked before anything runs, the plans
of the sides that run now, run in the one run loop (interleaved, settled under `--reps auto`,
settle.py), and why each row took no more reps, for the comparison (verdict/stops.py)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from jobbench.core.run.loop import run_plans
from jobbench.core.run.resolve import ResolvedSide, resolve
from jobbench.core.run.settle import AUTO, Settler
from jobbench.core.run.target_seam import Plan, Progress, Target
from jobbench.core.scenario.checks import REPS, check_count
from jobbench.core.scenario.config import RunConfig
from jobbench.core.scenario.project import Project, Suite, apply_variant, load_project, pick_suite
from jobbench.errors import UsageError
from jobbench.results.model import Params, Result
from jobbench.results.store import result_path, safe_label
from jobbench.verdict.gate import GateConfig
from jobbench.verdict.pairing import Named, match_scenarios
from jobbench.verdict.stops import Stops

CUT_SHORT = "B's workers cut its last rep short, ending the run"


@dataclass(frozen=True)
class Call:
    """What a compare or gate call asks of its sides, its flags checked: the two names, the
    suite and its reps (None: the suite's; `auto`: settle each row), where results go and
    where the sides that run now run (`target` makes one Target per side)."""

    baseline: str
    candidate: str
    suite: str | None
    reps: int | str | None
    max_reps: int
    budget_s: float
    lanes: int | str  # rows side by side (lanes.py)
    out: Path
    repo: Path | None
    rerun: bool
    gate: GateConfig
    folder: Path
    target: Callable[[], Target]


@dataclass(frozen=True)
class CallPlan:
    """The call planned: its suite and first reps, its sides and the variants beside them,
    the latency fields their variants may set apart, and the plans of those that run now."""

    call: Call
    suite: Suite
    reps: int
    sides: tuple[ResolvedSide, ResolvedSide]
    beside: tuple[ResolvedSide, ...]
    free_latency: frozenset[str]
    metric_for: Callable[[str], str | None]  # a row's chosen gated metric
    settle: Settler | None  # --reps auto
    plans: tuple[Plan, ...]

    @property
    def paths(self) -> tuple[Path, Path]:
        """Where A's and B's results are: a saved side's file, or where its run saves."""
        a, b = (side.path or result_path(self.call.out, side.label) for side in self.sides)
        return a, b

    def recorded_paths(self) -> list[str]:
        """A's and B's results as the comparison records them: relative to its folder."""
        return [os.path.relpath(path, self.call.out) for path in self.paths]


@dataclass(frozen=True)
class Ran:
    """A's and B's results, those of the variants beside them, why each row took no more reps,
    and whether B's own workers ended the run."""

    docs: tuple[Result, Result]
    beside: tuple[Result, ...]
    stops: Stops
    cut_short: bool


def plan_call(call: Call, progress: Progress) -> CallPlan:
    """Everything checked before anything runs (a usage error is one line): the suite, the
    reps, both sides and those beside them, each pairing of their scenarios; then each side
    said, and the plans of those that run now."""
    project = load_project(call.folder)
    suite = pick_suite(project, call.suite)
    reps, auto = _first_reps(call, suite)
    sides = _resolve_sides(call, project)
    beside = _resolve_beside(call, project, suite, sides)
    free = _free_latency(sides, project)
    match_scenarios(_lineup(sides[0], suite), _lineup(sides[1], suite), free)
    for extra in beside:  # each beside A, as B is: the same scenarios, its own latency
        extra_free = _free_latency((sides[0], extra), project)
        match_scenarios(_lineup(sides[0], suite), _lineup(extra, suite), extra_free)
    for key, side in zip("AB", sides):
        progress.message(f"{key} = {side.name}: {side.origin}")
    for extra in beside:
        progress.message(f"beside them ({suite.name}): {extra.name}: {extra.origin}")
    metric_for = _metric_chooser(call, suite)
    settle = _settler(call, suite, reps, metric_for, progress) if auto else None
    plans = tuple(
        Plan(
            RunConfig(
                scenarios=apply_variant(suite, s.variant), reps=reps, label=s.label, out=call.out
            ),
            call.target(),
        )
        for s in (*sides, *beside)
        if s.variant is not None
    )
    return CallPlan(call, suite, reps, sides, beside, free, metric_for, settle, plans)


def run_call(planned: CallPlan, progress: Progress) -> Ran:
    """Saved sides as they are; the rest run now, interleaved rep by rep (and settled, when
    both run now and no variant runs beside them), the variants beside them after the two
    sides' plans."""
    sides, beside = planned.sides, planned.beside
    settle = planned.settle if len(planned.plans) == 2 else None
    # The candidate's own failures (a hung or dead worker) are judged, not fatal: its plan is
    # the last of the two sides' whenever it runs now.
    running = sum(s.variant is not None for s in sides)
    candidate = running - 1 if sides[1].variant is not None else None
    beside_from = running if beside else None  # the plans beside come after the sides'
    plans = list(planned.plans)
    lanes = planned.call.lanes
    ran = iter(run_plans(plans, progress, settle, candidate, beside_from, lanes) if plans else [])
    every = [s.doc if s.doc is not None else next(ran) for s in (*sides, *beside)]
    docs = (every[0], every[1])
    cut_short = docs[1].error is not None and sides[1].variant is not None
    if cut_short:
        progress.message(f"B's run stopped early, judged as its behaviour: {docs[1].error}")
    return Ran(docs, tuple(every[2:]), _stops(planned, docs[0] if cut_short else None), cut_short)


def _first_reps(call: Call, suite: Suite) -> tuple[int, bool]:
    """The first reps of every row, and whether to settle past them (`--reps auto`)."""
    if call.reps == AUTO:
        check_count(replace(REPS, flag="--max-reps"), call.max_reps)
        if call.max_reps < suite.reps:
            raise UsageError(
                f"--max-reps {call.max_reps}: must be at least the suite's {suite.reps} reps"
            )
        return suite.reps, True
    reps = suite.reps if call.reps is None else int(call.reps)
    check_count(REPS, reps)
    return reps, False


def side_labels(baseline: str, candidate: str) -> tuple[str, str]:
    """The saved labels of the two sides; `compare main main` (an A/A check of the noise)
    saves B as main-b, so the two runs do not write one file."""
    a, b = safe_label(baseline), safe_label(candidate)
    return a, b if b != a else f"{b}-b"


def _resolve_sides(call: Call, project: Project) -> tuple[ResolvedSide, ResolvedSide]:
    names = (call.baseline, call.candidate)
    a, b = (
        resolve(name, project, call.out, call.repo, call.rerun, label)
        for name, label in zip(names, side_labels(*names))
    )
    saved = {s.path.resolve() for s in (a, b) if s.path is not None}
    for side in (a, b):
        target = result_path(call.out, side.label)
        if side.variant is not None and target.resolve() in saved:
            raise UsageError(
                f"{side.name} would run over {target}, which the other side reads; "
                "copy that file elsewhere first or pass --out DIR"
            )
    return a, b


def _resolve_beside(
    call: Call, project: Project, suite: Suite, sides: Sequence[ResolvedSide]
) -> tuple[ResolvedSide, ...]:
    """The variants a suite sets beside the two sides on its table (the `fixes` suite's), those
    that are neither side, each resolved as a side is (a saved label unless --rerun). None when
    settling (`--reps auto`, the gate's): settling weighs two sides, and the gate judges them."""
    if call.reps == AUTO:
        return ()
    taken = {call.baseline, call.candidate, *(side.label for side in sides)}
    beside = []
    for name in suite.variants:
        if name in taken:
            continue
        if name not in project.variants:
            where = f"{suite.where}: variants" if suite.where else f"--suite {suite.name}"
            raise UsageError(
                f"{where}: {name!r} is no variant; known: " + ", ".join(sorted(project.variants))
            )
        beside.append(resolve(name, project, call.out, call.repo, call.rerun))
    return tuple(beside)


def _free_latency(sides: Sequence[ResolvedSide], project: Project) -> frozenset[str]:
    """Latency fields a side's variant sets on purpose (a saved label of a variant's name is
    that variant's run): those may differ between the sides, no others."""
    fields: set[str] = set()
    for side in sides:
        variant = side.variant or project.variants.get(side.name)
        if variant is not None:
            fields |= {key.removesuffix("_latency") for key in variant.latency}
    return frozenset(fields)


@dataclass(frozen=True)
class _PlannedScenario:
    name: str
    params: Params


@dataclass(frozen=True)
class _Lineup:
    """A side as far as matching scenarios goes (a verdict.pairing.Lineup)."""

    label: str
    scenarios: Sequence[Named]


def _lineup(side: ResolvedSide, suite: Suite) -> _Lineup:
    """A side as far as matching scenarios goes: a saved result as it is, a variant as the
    suite's scenarios it will run."""
    if side.doc is not None:
        return _Lineup(side.doc.label, side.doc.scenarios)
    assert side.variant is not None  # resolve gives a saved result or a variant to run
    scenarios = [
        _PlannedScenario(s.name, Params.model_validate(s.params()))
        for s in apply_variant(suite, side.variant)
    ]
    return _Lineup(side.label, scenarios)


def _metric_chooser(call: Call, suite: Suite) -> Callable[[str], str | None]:
    """A row's chosen gated metric: --metric, else the suite's row (comparison.gated_metric
    falls back on what the result recorded, then on time to 99 %)."""
    return lambda name: call.gate.metric or suite.metric_for(name)


def _settler(
    call: Call,
    suite: Suite,
    reps: int,
    metric_for: Callable[[str], str | None],
    progress: Progress,
) -> Settler:
    """`--reps auto`: the tests gate.judge will make, a row each and its cost's if judged on
    it, held to the same levels at every look; its budget counts from here."""
    rows = suite.scenarios
    return Settler(
        call.gate,
        metric_for,
        rows=len(rows),
        costed=sum(call.gate.judges_cost(s.fleet is not None) for s in rows),
        first_reps=reps,
        messages=progress,
        max_reps=call.max_reps,
        budget_s=call.budget_s,
    )


def _stops(planned: CallPlan, cut_short: Result | None) -> Stops:
    """Why each row took no more reps: the settling loop's reason, else the call's; with
    `cut_short` (A's result, when B's workers ended the run), its last row's is that."""
    if any(side.doc is not None for side in planned.sides):
        otherwise = "a side is a saved result: no reps were added"
    else:
        otherwise = f"fixed --reps {planned.reps} (--reps auto settles)"
    settle = planned.settle
    stops = settle.settled(otherwise) if settle is not None else Stops(otherwise=otherwise)
    if cut_short is None or not cut_short.scenarios:
        return stops
    return stops.stopped_as(cut_short.scenarios[-1].name, CUT_SHORT)  # the last row's
