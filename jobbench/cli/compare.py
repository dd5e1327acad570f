"""`jobbench compare` and `jobbench gate`: flags -> CompareRequest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

from jobbench.cli.app import (
    Baseline,
    Budget,
    Candidate,
    Cluster,
    Format,
    Lanes,
    MaxCostRegression,
    MaxRegression,
    MaxReps,
    Metric,
    Opt,
    Out,
    PinQueue,
    Quiet,
    Repo,
    RepsAuto,
    Wide,
    WorkerCpus,
    app,
    exit_with,
)
from jobbench.core.run.settle import DEFAULT_MAX_REPS

BaselineName = Annotated[
    str | None,
    Opt(metavar="TEXT", help="how the comment names A, e.g. 'base abc1234 (merge base)'"),
]
CandidateName = Annotated[
    str | None, Opt(metavar="TEXT", help="how the comment names B, e.g. 'head def5678'")
]
SimOrFake = Annotated[
    str,
    Opt(metavar="fake|sim", help="sides that run now: fake queue and workers, or simulated"),
]


@app.command()
def compare(
    baseline: Baseline,
    candidate: Candidate,
    suite: Annotated[
        str | None, Opt(metavar="SUITE", help="suite of scenarios (default gate: seed + trickle)")
    ] = None,
    reps: RepsAuto = None,
    max_reps: MaxReps = DEFAULT_MAX_REPS,
    budget: Budget = "45m",
    lanes: Lanes = "auto",
    fmt: Format = "table",
    wide: Wide = False,
    out: Out = Path("reports"),
    repo: Repo = None,
    rerun: Annotated[
        bool, Opt("--rerun", help="run variants even if a saved label exists")
    ] = False,
    metric: Metric = None,
    max_regression: MaxRegression = "5%",
    max_cost_regression: MaxCostRegression = None,
    fail_on_regression: Annotated[
        bool, Opt("--fail-on-regression", help="exit 1 / 3 like jobbench gate")
    ] = False,
    markdown: Annotated[
        Path | None, Opt(metavar="FILE", help="also write a PR-comment body here")
    ] = None,
    baseline_name: BaselineName = None,
    candidate_name: CandidateName = None,
    quiet: Quiet = False,
    html: Annotated[
        Path | None, Opt(metavar="FILE", help="also write the HTML report (A and B plots)")
    ] = None,
    pin_queue: PinQueue = True,
    target: SimOrFake = "fake",
    cluster: Cluster = None,
    worker_cpus: WorkerCpus = None,
) -> None:
    """Compare a candidate against a baseline, side by side, with a verdict.

    --reps defaults to the suite's, or to auto with --fail-on-regression."""
    _compare(
        baseline=baseline,
        candidate=candidate,
        suite=suite,
        reps=reps,
        max_reps=max_reps,
        budget=budget,
        lanes=lanes,
        fmt=fmt,
        wide=wide,
        out=out,
        repo=repo,
        rerun=rerun,
        metric=metric,
        max_regression=max_regression,
        max_cost_regression=max_cost_regression,
        fail_on_regression=fail_on_regression,
        markdown=markdown,
        names=(baseline_name, candidate_name),
        quiet=quiet,
        html=html,
        pin_queue=pin_queue,
        target=target,
        cluster=cluster,
        worker_cpus=worker_cpus,
    )


@app.command()
def gate(
    baseline: Baseline,
    candidate: Candidate,
    metric: Metric = None,
    max_regression: MaxRegression = "5%",
    max_cost_regression: MaxCostRegression = None,
    suite: Annotated[
        str | None, Opt(metavar="SUITE", help="suite, when a side runs now (default gate)")
    ] = None,
    reps: Annotated[
        str,
        Opt(
            "--reps", "-n", metavar="N|auto", help="reps a side: auto (settle unsettled rows) or N"
        ),
    ] = "auto",
    max_reps: MaxReps = DEFAULT_MAX_REPS,
    budget: Budget = "45m",
    lanes: Lanes = "auto",
    wide: Wide = False,
    out: Out = Path("reports"),
    repo: Repo = None,
    markdown: Annotated[
        Path | None, Opt(metavar="FILE", help="write a PR-comment body here")
    ] = None,
    baseline_name: BaselineName = None,
    candidate_name: CandidateName = None,
    fmt: Format = "table",
    quiet: Quiet = False,
    target: SimOrFake = "fake",
    cluster: Cluster = None,
    worker_cpus: WorkerCpus = None,
) -> None:
    """CI perf gate: exit 0 pass, 1 regression, 3 inconclusive."""
    _compare(
        baseline=baseline,
        candidate=candidate,
        suite=suite,
        reps=reps,
        max_reps=max_reps,
        budget=budget,
        lanes=lanes,
        fmt=fmt,
        wide=wide,
        out=out,
        repo=repo,
        rerun=False,
        metric=metric,
        max_regression=max_regression,
        max_cost_regression=max_cost_regression,
        fail_on_regression=True,
        markdown=markdown,
        names=(baseline_name, candidate_name),
        quiet=quiet,
        html=None,
        pin_queue=True,
        target=target,
        cluster=cluster,
        worker_cpus=worker_cpus,
    )


def _compare(
    *,
    baseline: str,
    candidate: str,
    suite: str | None,
    reps: str | None,
    max_reps: int,
    budget: str,
    lanes: str,
    fmt: str,
    wide: bool,
    out: Path,
    repo: Path | None,
    rerun: bool,
    metric: str | None,
    max_regression: str,
    max_cost_regression: str | None,
    fail_on_regression: bool,
    markdown: Path | None,
    names: tuple[str | None, str | None],
    quiet: bool,
    html: Path | None,
    pin_queue: bool,
    target: str,
    cluster: str | None,
    worker_cpus: float | None,
) -> NoReturn:
    """compare and gate: the same request, the gate always failing on a regression."""
    from jobbench.commands.cluster import ClusterRequest
    from jobbench.commands.compare import CompareRequest, compare_command
    from jobbench.core.run.lanes import parse_lanes
    from jobbench.core.run.settle import AUTO, parse_duration, parse_reps
    from jobbench.render.text.progress import make_progress
    from jobbench.verdict.gate import GateConfig, parse_percent

    def command() -> int:
        chosen = reps or (AUTO if fail_on_regression else None)
        request = CompareRequest(
            baseline=baseline,
            candidate=candidate,
            suite=suite,
            reps=None if chosen is None else parse_reps(chosen),
            max_reps=max_reps,
            budget_s=parse_duration(budget),
            lanes=parse_lanes(lanes),
            fmt=fmt,
            wide=wide,
            out=out,
            repo=repo,
            rerun=rerun,
            fail_on_regression=fail_on_regression,
            gate=GateConfig(
                metric,
                parse_percent(max_regression),
                None
                if max_cost_regression is None
                else parse_percent(max_cost_regression, "--max-cost-regression"),
            ),
            markdown_file=markdown,
            html=html,
            pin_queue=pin_queue,
            target=target,
            cluster=ClusterRequest(cluster, worker_cpus),
            names=names,
        )
        return compare_command(request, make_progress(quiet)[1])

    exit_with(command)
