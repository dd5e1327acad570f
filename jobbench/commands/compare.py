"""`jobbench compare` and `jobbench gate`, one pass: the request checked, the call's sides
planned and run (core/run/sides.py), the comparison built and judged (verdict/), saved as
`<A>-vs-<B>.json` and `.md`, rendered; the exit code."""

from __future__ import annotations

import time
from functools import partial

from jobbench.commands.cluster import check_cluster, fake_target, leave_cluster
from jobbench.commands.requests.compare import CompareRequest
from jobbench.core.run.sides import Call, plan_call, run_call
from jobbench.core.run.target_seam import Progress
from jobbench.core.scenario.checks import check_writable_file, check_writable_folder
from jobbench.core.sim.sim_target import SimTarget
from jobbench.render.text.compare_output import save_markdown, show
from jobbench.results.store import save_comparison
from jobbench.verdict.comparison import compare_docs
from jobbench.verdict.gate import call_exit, judge
from jobbench.verdict.side_by_side import side_by_side


def compare_command(request: CompareRequest, progress: Progress) -> int:
    try:
        return _compare(request, progress)
    finally:
        leave_cluster()


def _compare(request: CompareRequest, progress: Progress) -> int:
    began = time.monotonic()
    call = checked(request)
    planned = plan_call(call, progress)
    ran = run_call(planned, progress)
    comparison = compare_docs(
        *ran.docs,
        paths=planned.recorded_paths(),
        sources=[str(path) for path in planned.paths],
        free_latency=planned.free_latency,
        metric_for=planned.metric_for,
        rule=request.gate.rule(),
        stops=ran.stops,
    )
    code = call_exit(judge(comparison, request.gate), ran.cut_short, request.fail_on_regression)
    table = side_by_side([*ran.docs, *ran.beside]) if ran.beside else None
    comparison.baseline.name, comparison.candidate.name = request.names
    comparison.wall_s = round(time.monotonic() - began, 1)
    out, suite = request.out, planned.suite.name
    save_comparison(comparison, out)
    save_markdown(comparison, table, out, suite, request.markdown_file, request.fail_on_regression)
    show(comparison, table, request.fmt, request.wide, out, suite)
    if request.html is not None:
        from jobbench.render.page.report_page import write_report

        written = write_report(list(ran.docs), list(planned.paths), request.html, None, comparison)
        progress.message(f"html report: {written}")
    return code


def checked(request: CompareRequest) -> Call:
    """The request's flags checked against each other, once, before anything is read or run
    (each flag alone was checked as it was read): the call as core takes it, its sides run on
    the simulator or the fake target (here, or on --cluster)."""
    check_cluster(request.cluster, request.target)
    request.gate.validate()
    for flag, path in (("--html", request.html), ("--markdown", request.markdown_file)):
        if path is not None:
            check_writable_file(path, flag)
    check_writable_folder(request.out, "--out")
    return Call(
        baseline=request.baseline,
        candidate=request.candidate,
        suite=request.suite,
        reps=request.reps,
        max_reps=request.max_reps,
        budget_s=request.budget_s,
        lanes=request.lanes,
        out=request.out,
        repo=request.repo,
        rerun=request.rerun,
        gate=request.gate,
        folder=request.folder,
        target=SimTarget
        if request.target == "sim"
        else partial(fake_target, request.cluster, pin_queue=request.pin_queue),
    )
