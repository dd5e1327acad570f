"""`jobbench trend` and `jobbench bisect` (SDK history over the commits of --repo): flags ->
TrendRequest, BisectRequest."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from jobbench.cli.app import (
    Arg,
    Budget,
    Cluster,
    Lanes,
    MaxRegression,
    MaxReps,
    Metric,
    Opt,
    Out,
    PinQueue,
    Python,
    Quiet,
    TakeAhead,
    WorkerCpus,
    app,
    exit_with,
)
from jobbench.cli.values import seconds, whole
from jobbench.core.run.settle import DEFAULT_MAX_REPS

if TYPE_CHECKING:
    from jobbench.core.sdk_history.setup import SetupRequest

HistoryRepo = Annotated[
    Path | None, Opt(metavar="PATH", help="the SDK checkout (git) whose commits run")
]
HistorySuite = Annotated[
    str | None,
    Opt(metavar="SUITE", help="suite of scenarios (default gate), or give one scenario's flags"),
]
HistoryWorker = Annotated[
    str,
    Opt(metavar="KIND|CMD", help="runpod (each commit's SDK) or a command run from each checkout"),
]
Workers = Annotated[
    int | None, Opt("--workers", "-w", metavar="N", parser=whole(4), help="workers")
]
Slots = Annotated[
    int | None, Opt("--slots", "-s", metavar="N", parser=whole(32), help="jobs per worker at once")
]
Burst = Annotated[
    int | None, Opt("--burst", "-b", metavar="N", parser=whole(1024), help="jobs per burst")
]
JobSeconds = Annotated[
    float | None,
    Opt("--job-seconds", "-j", metavar="SECONDS", parser=seconds(0.5), help="each job's sleep"),
]
Load = Annotated[str | None, Opt(metavar="PROFILE", help="arrivals instead of a burst")]
Latency = Annotated[str | None, Opt(metavar="LATENCY", help="as jobbench run's")]
Reps = Annotated[
    int | None,
    Opt(
        "--reps",
        "-n",
        metavar="N",
        parser=whole(5),
        help="reps a row per commit (default: suite's)",
    ),
]
Json = Annotated[bool, Opt("--json", help="print a JSON document instead of the table")]


@app.command()
def trend(
    revrange: Annotated[str, Arg(metavar="REVRANGE", help="START..END (first-parent), or END")],
    repo: HistoryRepo = None,
    suite: HistorySuite = None,
    tags: Annotated[bool, Opt("--tags", help="only the tagged commits (and the start)")] = False,
    every: Annotated[
        int, Opt(metavar="N", parser=whole(10), help="every Nth commit (and the end)")
    ] = 1,
    reps: Reps = None,
    metric: Annotated[
        str | None,
        Opt(
            metavar="METRIC", help="each row's metric (default: its gated one, else time_to_p99_s)"
        ),
    ] = None,
    max_regression: Annotated[
        str, Opt(metavar="PERCENT", help="smallest change a change point may be, e.g. 5%")
    ] = "5%",
    html: Annotated[Path | None, Opt(metavar="FILE", help="also write the trend's page")] = None,
    json_out: Json = False,
    fmt: Annotated[
        str,
        Opt(
            "--format",
            metavar="FORMAT",
            help="table | json | bmf | github-action-benchmark (the newest commit's rows)",
        ),
    ] = "table",
    fail_on_change: Annotated[
        bool, Opt("--fail-on-change", help="exit 1 on a slowdown no earlier trend reported")
    ] = False,
    budget: Annotated[
        str, Opt(metavar="DURATION", help="no new commit starts past it (exit 3), e.g. 2h")
    ] = "12h",
    out: Out = Path("reports"),
    worker: HistoryWorker = "runpod",
    take_ahead: TakeAhead = 0,
    python: Python = None,
    workers: Workers = None,
    slots: Slots = None,
    burst: Burst = None,
    job_seconds: JobSeconds = None,
    load: Load = None,
    take_latency: Latency = None,
    wake_latency: Latency = None,
    hold: Latency = None,
    done_latency: Latency = None,
    pin_queue: PinQueue = True,
    lanes: Lanes = "auto",
    cluster: Cluster = None,
    worker_cpus: WorkerCpus = None,
    quiet: Quiet = False,
) -> None:
    """Run the suite at every commit of a range; find each row's change points."""
    from jobbench.commands.cluster import ClusterRequest
    from jobbench.commands.trend import TrendRequest, trend_command
    from jobbench.core.run.settle import parse_duration
    from jobbench.results.gate import GateConfig, parse_percent

    def command() -> int:
        setup = _setup(
            repo, suite, worker, take_ahead, python, reps, out, pin_queue, lanes,
            (workers, slots, burst, job_seconds, load),
            (take_latency, wake_latency, hold, done_latency),
        )  # fmt: skip
        request = TrendRequest(
            revrange=revrange,
            setup=setup,
            tags=tags,
            every=every,
            gate=GateConfig(metric, parse_percent(max_regression)),
            budget_s=parse_duration(budget),
            html=html,
            fmt="json" if json_out else fmt,
            fail_on_change=fail_on_change,
            quiet=quiet,
            cluster=ClusterRequest(cluster, worker_cpus),
        )
        return trend_command(request)

    exit_with(command)


@app.command()
def bisect(
    good: Annotated[str, Arg(metavar="GOOD", help="a commit of --repo whose rows are fast")],
    bad: Annotated[str, Arg(metavar="BAD", help="a later commit whose rows are slower")],
    repo: HistoryRepo = None,
    suite: HistorySuite = None,
    metric: Metric = None,
    max_regression: MaxRegression = "5%",
    reps: Annotated[
        int | None,
        Opt("--reps", "-n", metavar="N", parser=whole(5), help="first reps a side of each step"),
    ] = None,
    max_reps: MaxReps = DEFAULT_MAX_REPS,
    budget: Budget = "3h",
    json_out: Json = False,
    out: Out = Path("reports"),
    worker: HistoryWorker = "runpod",
    take_ahead: TakeAhead = 0,
    python: Python = None,
    workers: Workers = None,
    slots: Slots = None,
    burst: Burst = None,
    job_seconds: JobSeconds = None,
    load: Load = None,
    take_latency: Latency = None,
    wake_latency: Latency = None,
    hold: Latency = None,
    done_latency: Latency = None,
    pin_queue: PinQueue = True,
    lanes: Lanes = "auto",
    cluster: Cluster = None,
    worker_cpus: WorkerCpus = None,
    quiet: Quiet = False,
) -> None:
    """Find the first commit between GOOD and BAD slower than GOOD: exit 0 found, 3 unsettled."""
    from jobbench.commands.bisect import BisectRequest, bisect_command
    from jobbench.commands.cluster import ClusterRequest
    from jobbench.core.run.settle import parse_duration
    from jobbench.results.gate import GateConfig, parse_percent

    def command() -> int:
        setup = _setup(
            repo, suite, worker, take_ahead, python, reps, out, pin_queue, lanes,
            (workers, slots, burst, job_seconds, load),
            (take_latency, wake_latency, hold, done_latency),
        )  # fmt: skip
        request = BisectRequest(
            good=good,
            bad=bad,
            setup=setup,
            gate=GateConfig(metric, parse_percent(max_regression)),
            max_reps=max_reps,
            budget_s=parse_duration(budget),
            json_out=json_out,
            quiet=quiet,
            cluster=ClusterRequest(cluster, worker_cpus),
        )
        return bisect_command(request)

    exit_with(command)


def _setup(
    repo: Path | None,
    suite: str | None,
    worker: str,
    take_ahead: int,
    python: str | None,
    reps: int | None,
    out: Path,
    pin_queue: bool,
    lanes: str,
    scenario: tuple[int | None, int | None, int | None, float | None, str | None],
    latency: tuple[str | None, str | None, str | None, str | None],
) -> SetupRequest:
    from jobbench.core.run.lanes import parse_lanes
    from jobbench.core.scenario.config import LatencyFlags
    from jobbench.core.sdk_history.setup import ScenarioFlags, SetupRequest

    defaults = LatencyFlags()
    given = None
    if any(value is not None for value in latency):
        take, wake, hold, done = latency
        given = LatencyFlags(
            take or defaults.take,
            wake or defaults.wake,
            hold or defaults.hold,
            done or defaults.done,
        )
    workers, slots, burst, job_seconds, load = scenario
    return SetupRequest(
        repo=repo,
        suite=suite,
        scenario=ScenarioFlags(workers, slots, burst, job_seconds, load, given),
        worker=worker,
        take_ahead=take_ahead,
        python=python,
        reps=reps,
        out=out,
        pin_queue=pin_queue,
        lanes=parse_lanes(lanes),
    )
