"""`jobbench trend REVRANGE --repo PATH`: the suite at every commit of a range (what is saved is
reused), each row's change points, the table (or JSON), the page; exit 1 with --fail-on-change
on a slowdown no earlier trend reported, 3 when --budget stopped it before every commit ran."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jobbench.commands.cluster import check_cluster, fake_target, leave_cluster
from jobbench.commands.requests.trend import TrendRequest
from jobbench.core.scenario.checks import check_writable_file
from jobbench.core.sdk_history.commits import range_commits
from jobbench.core.sdk_history.setup import Setup, make_setup
from jobbench.core.sdk_history.trend_run import TrendRun, run_trend
from jobbench.errors import (
    EXIT_INCONCLUSIVE,
    EXIT_OK,
    EXIT_REGRESSION,
    INTERRUPTED,
    Interrupted,
    UsageError,
)
from jobbench.render.text import dashboard_formats
from jobbench.render.text.progress import make_progress
from jobbench.render.text.trend_text import render_points
from jobbench.render.words.commit_changes import point_line
from jobbench.results.history import archive, saved_runs
from jobbench.results.store import safe_label, write_json
from jobbench.verdict.change_points import ChangePoint, Series, change_points, document, series_of
from jobbench.verdict.comparison import gated_metric
from jobbench.verdict.gate import GateConfig


def trend_command(request: TrendRequest) -> int:
    try:
        return _trend(request)
    finally:
        leave_cluster()


def _trend(request: TrendRequest) -> int:
    check_cluster(request.cluster, "fake")
    request.gate.validate()
    if request.html is not None:
        check_writable_file(request.html, "--html")
    setup = make_setup(request.setup)
    commits = range_commits(setup.repo, request.revrange, tags=request.tags, every=request.every)
    if len(commits) < 2:
        raise UsageError(
            f"REVRANGE {request.revrange}: {len(commits)} commit; a trend needs two or more "
            "(START..END, without --tags or a large --every)"
        )
    _, progress = make_progress(request.quiet)
    # On a cluster the pairs of commits spread over its nodes; here they take turns.
    target = (
        None
        if request.cluster.address is None
        else fake_target(request.cluster, pin_queue=setup.pin_queue)
    )
    try:
        trend = run_trend(setup, commits, progress, request.budget_s, target)
    except (Interrupted, KeyboardInterrupt) as exc:  # a run's, or Ctrl-C between runs
        raise Interrupted(
            f"{exc or INTERRUPTED}; every commit that finished is kept: the same trend again "
            "runs only the rest"
        ) from None
    series, points = analyse(trend, setup, request.gate)
    if setup.reps == 1:
        progress.message(ONE_REP)
    doc = document(trend.commits, trend.states, series, points)
    # In a folder of its own: `history` and the commit store list the results in --out.
    path = setup.out / "trends" / f"{safe_label(setup.repo.resolve().name)}.json"
    known = reported(path)
    archive(path)
    write_json(doc, path)
    if request.fmt == "json":
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    elif request.fmt in dashboard_formats.FORMATS:
        dashboard_formats.write(request.fmt, dashboard_formats.of_trend(doc), sys.stdout)
    else:
        render_points(trend.commits, points, _summary(trend, path), sys.stdout)
    if request.html is not None:
        from jobbench.render.page.trend_page import write_trend_page

        notes = [_summary(trend, path), method_note(setup.reps, request.gate.max_regression)]
        title = f"{setup.repo.resolve().name} {request.revrange}"
        written = write_trend_page(request.html, title, trend.commits, series, points, notes)
        progress.message(f"html page: {written}")
    return _exit_code(trend, points, known, request, progress.message)


def analyse(
    trend: TrendRun, setup: Setup, gate: GateConfig
) -> tuple[list[Series], list[ChangePoint]]:
    """Each row's series of its gated metric (--metric, else the row's), and its change points."""
    rule = gate.rule()
    series, points = [], []
    for scenario in setup.suite.scenarios:
        entries = [rows[scenario.name] for rows in trend.rows if scenario.name in rows]
        if not entries:
            continue
        chosen = gate.metric or setup.suite.metric_for(scenario.name)
        row = series_of(trend.rows, scenario.name, gated_metric(chosen, entries[0]), rule)
        series.append(row)
        points += change_points(row, gate.max_regression)
    points.sort(key=lambda point: (point.index, point.scenario))
    return series, points


def reported(path: Path) -> set[tuple[str, str, str]]:
    """The slowdowns the trends saved at `path` before reported (their history included), as
    (commit, scenario, metric): a nightly run fails once on each."""
    seen = set()
    for file in [path, *saved_runs(path)]:
        try:
            data: Any = json.loads(file.read_text())
        except (OSError, ValueError):
            continue
        for point in data.get("change_points", []) if isinstance(data, dict) else []:
            if isinstance(point, dict) and point.get("direction") == "slower":
                seen.add(
                    (str(point.get("commit")), str(point.get("scenario")), str(point.get("metric")))
                )
    return seen


def _exit_code(
    trend: TrendRun,
    points: Sequence[ChangePoint],
    known: set[tuple[str, str, str]],
    request: TrendRequest,
    say: Callable[[str], None],
) -> int:
    if request.fail_on_change:
        new = [
            p
            for p in points
            if p.direction == "slower"
            and (trend.commits[p.index].sha, p.scenario, p.metric) not in known
        ]
        for point in new:
            sys.stderr.write(f"new slowdown: {point_line(point, trend.commits[point.index])}\n")
        if new:
            return EXIT_REGRESSION
    if trend.stopped is not None:
        say(f"{trend.stopped}; the same trend again runs only those")
        return EXIT_INCONCLUSIVE
    return EXIT_OK


def _summary(trend: TrendRun, path: Path) -> str:
    skipped = sum(1 for state in trend.states if state.skipped)
    measured = sum(1 for rows in trend.rows if rows)
    stopped = f"; {trend.stopped}" if trend.stopped else ""
    return (
        f"{len(trend.commits)} commits, {measured} measured ({trend.ran} run now, "
        f"{trend.reused} saved before), {skipped} skipped{stopped}; saved {path}"
    )


# At one rep a commit no commit shows the spread of its own reps, so each row's noise is read
# from the differences between neighbouring commits; where most commits move (a release
# history), that is the size of a typical move, and only steps well beyond it are marked
# (docs/history.md, "On the real history").
ONE_REP = (
    "1 rep a commit: each row's noise is read from neighbouring commits' differences, so where "
    "most commits move, only the largest steps are marked; --reps 3 reads it within commits"
)


def method_note(reps: int, max_regression: float) -> str:
    """How the trend's change points were found, for its page."""
    rule = (
        f"{reps} reps a row per commit; change points by the L1 Potts model with a penalty "
        f"from the row's noise, a change of more than {max_regression:.0%} (docs/history.md)"
    )
    return f"{rule}. {ONE_REP}" if reps == 1 else rule
