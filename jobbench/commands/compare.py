"""`jobbench compare` and `jobbench gate`: resolve both sides, run what must run (interleaved),
compare, judge, save `<A>-vs-<B>.json/.md`, render, exit code."""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from jobbench.commands.cluster import check_cluster, fake_target, leave_cluster
from jobbench.commands.requests.compare import CompareRequest
from jobbench.core.run.loop import run_plans
from jobbench.core.run.resolve import ResolvedSide, resolve
from jobbench.core.run.settle import AUTO, Settler
from jobbench.core.run.target_seam import Plan, Progress
from jobbench.core.scenario.checks import (
    REPS,
    check_count,
    check_writable_file,
    check_writable_folder,
)
from jobbench.core.scenario.config import RunConfig
from jobbench.core.scenario.project import (
    Project,
    Suite,
    apply_variant,
    load_project,
    pick_suite,
)
from jobbench.core.sim.sim_target import SimTarget
from jobbench.errors import EXIT_OK, EXIT_REGRESSION, EXIT_RUN_FAILED, UsageError
from jobbench.render import renderer
from jobbench.render.text.side_by_side_text import render_side_by_side
from jobbench.results.compare import compare_docs
from jobbench.results.gate import judge
from jobbench.results.model import Comparison, Params, Result, Row
from jobbench.results.pairing import Named, match_scenarios
from jobbench.results.side_by_side import SideBySide, side_by_side
from jobbench.results.store import result_path, safe_label, save_document


def pick_reps(request: CompareRequest, suite: Suite) -> tuple[int, bool]:
    """The first reps of every row, and whether to settle past them (`--reps auto`)."""
    if request.reps == AUTO:
        check_count(replace(REPS, flag="--max-reps"), request.max_reps)
        if request.max_reps < suite.reps:
            raise UsageError(
                f"--max-reps {request.max_reps}: must be at least the suite's {suite.reps} reps"
            )
        return suite.reps, True
    reps = suite.reps if request.reps is None else int(request.reps)
    check_count(REPS, reps)
    return reps, False


def metric_chooser(request: CompareRequest, suite: Suite) -> Callable[[str], str | None]:
    """A scenario's chosen gated metric: --metric, else the suite's row (compare.gated_metric
    falls back on what the result recorded, then on time to 99 %)."""
    return lambda name: request.gate.metric or suite.metric_for(name)


def side_labels(baseline: str, candidate: str) -> tuple[str, str]:
    """The saved labels of the two sides; `compare main main` (an A/A check of the noise)
    saves B as main-b, so the two runs do not write one file."""
    a, b = safe_label(baseline), safe_label(candidate)
    return a, b if b != a else f"{b}-b"


def resolve_sides(request: CompareRequest, project: Project) -> list[ResolvedSide]:
    names = (request.baseline, request.candidate)
    sides = [
        resolve(name, project, request.out, request.repo, request.rerun, label)
        for name, label in zip(names, side_labels(*names))
    ]
    saved = {s.path.resolve() for s in sides if s.path is not None}
    for side in sides:
        target = result_path(request.out, side.label)
        if side.variant is not None and target.resolve() in saved:
            raise UsageError(
                f"{side.name} would run over {target}, which the other side reads; "
                "copy that file elsewhere first or pass --out DIR"
            )
    return sides


@dataclass(frozen=True)
class PlannedScenario:
    name: str
    params: Params


@dataclass(frozen=True)
class Planned:
    """A side as far as matching scenarios goes (a results.compare.Lineup)."""

    label: str
    scenarios: Sequence[Named]


def planned(side: ResolvedSide, suite: Suite) -> Planned:
    """A side as far as matching scenarios goes: a saved result as it is, a variant as the
    suite's scenarios it will run."""
    if side.doc is not None:
        return Planned(side.doc.label, side.doc.scenarios)
    assert side.variant is not None  # resolve gives a saved result or a variant to run
    scenarios = [
        PlannedScenario(s.name, Params.model_validate(s.params()))
        for s in apply_variant(suite, side.variant)
    ]
    return Planned(side.label, scenarios)


def resolve_extras(
    request: CompareRequest, project: Project, suite: Suite, sides: list[ResolvedSide]
) -> list[ResolvedSide]:
    """The variants a suite sets beside the two sides on its table (the `fixes` suite's), those
    that are neither side, each resolved as a side is (a saved label unless --rerun). None when
    settling (`--reps auto`, the gate's): settling weighs two sides, and the gate judges them."""
    if request.reps == AUTO:
        return []
    taken = {request.baseline, request.candidate, *(side.label for side in sides)}
    extras = []
    for name in suite.variants:
        if name in taken:
            continue
        if name not in project.variants:
            where = f"{suite.where}: variants" if suite.where else f"--suite {suite.name}"
            raise UsageError(
                f"{where}: {name!r} is no variant; known: " + ", ".join(sorted(project.variants))
            )
        extras.append(resolve(name, project, request.out, request.repo, request.rerun))
    return extras


def free_latency(sides: list[ResolvedSide], project: Project) -> frozenset[str]:
    """Latency fields a side's variant sets on purpose (a saved label of a variant's name is
    that variant's run): those may differ between the sides, no others."""
    fields: set[str] = set()
    for side in sides:
        variant = side.variant or project.variants.get(side.name)
        if variant is not None:
            fields |= {key.removesuffix("_latency") for key in variant.latency}
    return frozenset(fields)


def run_sides(
    sides: list[ResolvedSide],
    suite: Suite,
    reps: int,
    request: CompareRequest,
    progress: Progress,
    settle: Settler | None,
    extras: Sequence[ResolvedSide] = (),
) -> list[Result]:
    """Saved sides as they are; the rest run now, interleaved rep by rep (and settled, when
    both run now, no extra variant does and `settle` is given). The results of `sides`, then
    of `extras` (a suite's other variants, run after the two sides' plans)."""
    plans = [
        Plan(
            RunConfig(
                scenarios=apply_variant(suite, s.variant),
                reps=reps,
                label=s.label,
                out=request.out,
            ),
            SimTarget()
            if request.target == "sim"
            else fake_target(request.cluster, pin_queue=request.pin_queue),
        )
        for s in [*sides, *extras]
        if s.variant is not None
    ]
    settle = settle if len(plans) == 2 else None
    # The candidate's own failures (a hung or dead worker) are judged, not fatal: its plan is
    # the last of the two sides' whenever it runs now.
    running = sum(s.variant is not None for s in sides)
    candidate = running - 1 if sides[1].variant is not None else None
    beside_from = running if extras else None  # the extras' plans come after the sides'
    ran = iter(
        run_plans(plans, progress, settle, candidate, beside_from, request.lanes) if plans else []
    )
    return [s.doc if s.doc is not None else next(ran) for s in [*sides, *extras]]


def compare_command(request: CompareRequest, progress: Progress) -> int:
    try:
        return _compare(request, progress)
    finally:
        leave_cluster()


def _compare(request: CompareRequest, progress: Progress) -> int:
    began = time.monotonic()
    check_cluster(request.cluster, request.target)
    request.gate.validate()
    for flag, path in (("--html", request.html), ("--markdown", request.markdown_file)):
        if path is not None:
            check_writable_file(path, flag)
    check_writable_folder(request.out, "--out")
    project = load_project(request.folder)
    suite = pick_suite(project, request.suite)
    reps, auto = pick_reps(request, suite)
    sides = resolve_sides(request, project)
    extras = resolve_extras(request, project, suite, sides)
    free = free_latency(sides, project)
    match_scenarios(planned(sides[0], suite), planned(sides[1], suite), free)  # before any run
    for extra in extras:  # each beside A, as B is: the same scenarios, its own latency
        extra_free = free_latency([sides[0], extra], project)
        match_scenarios(planned(sides[0], suite), planned(extra, suite), extra_free)
    for key, side in zip("AB", sides):  # after the checks: a usage error is one line
        progress.message(f"{key} = {side.name}: {side.origin}")
    for extra in extras:
        progress.message(f"beside them ({suite.name}): {extra.name}: {extra.origin}")
    metric_for = metric_chooser(request, suite)
    rule = request.gate.rule()
    settle = None
    if auto:  # the tests gate.judge will make: a row each, and its cost's if judged on it
        costed = sum(request.gate.judges_cost(s.fleet is not None) for s in suite.scenarios)
        settle = Settler(
            request.gate,
            metric_for,
            rows=len(suite.scenarios),
            costed=costed,
            first_reps=reps,
            messages=progress,
            max_reps=request.max_reps,
            budget_s=request.budget_s,
        )
    everyone = run_sides(sides, suite, reps, request, progress, settle, extras)
    docs = everyone[: len(sides)]
    paths = [s.path or result_path(request.out, s.label) for s in sides]
    relative = [os.path.relpath(p, request.out) for p in paths]
    comparison = compare_docs(
        docs[0],
        docs[1],
        paths=relative,
        sources=[str(p) for p in paths],
        free_latency=free,
        metric_for=metric_for,
        rule=rule,
    )
    for row in comparison.rows:
        row.stopped = _stopped(row, sides, settle, reps)
        row.looks = settle.looks.get(row.scenario, 1) if settle else 1
    b_stopped = docs[1].error is not None and sides[1].variant is not None  # B ended the run
    if b_stopped and comparison.rows:
        comparison.rows[-1].stopped = "B's workers cut its last rep short, ending the run"
    code = judge(comparison, request.gate)
    if b_stopped:
        # A gate fails it as a regression (its rows name what its workers did); anything
        # short of that, or a plain compare, is a run that could not finish: never a pass.
        judged = request.fail_on_regression and code == EXIT_REGRESSION
        code = code if judged else EXIT_RUN_FAILED
        progress.message(f"B's run stopped early, judged as its behaviour: {docs[1].error}")
    table = side_by_side(everyone) if extras else None
    comparison.baseline.name, comparison.candidate.name = request.names
    comparison.wall_s = round(time.monotonic() - began, 1)
    _save(comparison, docs, request, suite, table)
    renderer(request.fmt)(comparison, sys.stdout, _width(), request.wide)
    if table is not None:
        _show_side_by_side(table, docs, request, suite)
    if request.html is not None:
        from jobbench.render.page.report_page import write_report

        written = write_report(docs, paths, request.html, None, comparison)
        progress.message(f"html report: {written}")
    return code if request.fail_on_regression or code == EXIT_RUN_FAILED else EXIT_OK


def _stopped(row: Row, sides: list[ResolvedSide], settle: Settler | None, reps: int) -> str:
    if settle is not None and row.scenario in settle.stopped:
        return settle.stopped[row.scenario]
    if any(side.doc is not None for side in sides):
        return "a side is a saved result: no reps were added"
    return f"fixed --reps {reps} (--reps auto settles)"


def _save(
    comparison: Comparison,
    docs: list[Result],
    request: CompareRequest,
    suite: Suite,
    table: SideBySide | None,
) -> None:
    """`<A>-vs-<B>.json` and `.md`, the PR-comment body, and the Actions job summary. With the
    suite's other variants (`table`), their side-by-side table is saved as
    `<A>-vs-<B>.<suite>.md` and follows A against B in each Markdown, so a PR comment shows
    every variant too."""
    stem = _stem(docs)
    save_document(comparison, request.out / f"{stem}.json")  # the one before goes to history
    markdown = _markdown(comparison)
    if table is not None:
        every_variant = _side_by_side_markdown(table, suite)
        _side_by_side_path(docs, request, suite).write_text(every_variant)
        markdown += f"\n{every_variant}"
    (request.out / f"{stem}.md").write_text(markdown)
    if request.markdown_file is not None:
        request.markdown_file.write_text(markdown)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file and request.fail_on_regression:
        with open(summary_file, "a") as handle:
            handle.write(markdown + "\n")


def _stem(docs: list[Result]) -> str:
    return f"{safe_label(docs[0].label)}-vs-{safe_label(docs[1].label)}"


def _side_by_side_path(docs: list[Result], request: CompareRequest, suite: Suite) -> Path:
    return request.out / f"{_stem(docs)}.{safe_label(suite.name)}.md"


def _side_by_side_markdown(table: SideBySide, suite: Suite) -> str:
    """Every variant of the suite on one table (docs/fixes.md), in Markdown."""
    buffer = io.StringIO()
    render_side_by_side(table, buffer, markdown=True)
    return f"### {suite.name}: every variant side by side\n\n{buffer.getvalue()}"


def _show_side_by_side(
    table: SideBySide, docs: list[Result], request: CompareRequest, suite: Suite
) -> None:
    """The side-by-side table after the comparison in the table and Markdown formats (the JSON
    and CSV ones stay one document on stdout)."""
    if request.fmt in ("table", "markdown"):
        path = _side_by_side_path(docs, request, suite)
        sys.stdout.write(f"\n{suite.name}: every variant side by side ({path})\n\n")
        render_side_by_side(table, sys.stdout, markdown=request.fmt == "markdown")


def _markdown(comparison: Comparison) -> str:
    buffer = io.StringIO()
    renderer("markdown")(comparison, buffer)
    return buffer.getvalue()


def _width() -> int:
    try:
        return max(100, os.get_terminal_size().columns)
    except OSError:
        return 160
