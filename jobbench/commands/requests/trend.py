"""`jobbench trend` and `jobbench bisect` (SDK history over the commits of --repo): their requests.
What both run at each commit (the checkout, the rows, the worker) is read from their flags
alike, into one SetupRequest (core/sdk_history/setup.py): the flags both take in the same order
are one group, EachCommit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jobbench.commands.requests.flag import argument, flag, group, option, path, seconds, whole
from jobbench.commands.requests.shared import (
    BUDGET,
    LANES,
    MAX_REGRESSION,
    MAX_REPS,
    METRIC,
    OUT,
    PIN_QUEUE,
    PYTHON,
    QUIET,
    TAKE_AHEAD,
    ClusterRequest,
    read_percent,
    read_result_format,
)
from jobbench.core.run.settle import parse_duration

if TYPE_CHECKING:
    from jobbench.core.sdk_history.setup import SetupRequest
    from jobbench.verdict.gate import GateConfig

REPO = option(
    "--repo",
    metavar="PATH",
    read=path,
    help="the SDK checkout (git) whose commits run",
    default=None,
)
SUITE = option(
    "--suite",
    metavar="SUITE",
    help="suite of scenarios (default gate), or give one scenario's flags",
    default=None,
)
WORKER = option(
    "--worker",
    metavar="KIND|CMD",
    help="runpod (each commit's SDK) or a command run from each checkout",
    default="runpod",
)
# One scenario's flags, instead of a suite (None: not given).
WORKERS = option("--workers", "-w", metavar="N", read=whole(4), help="workers", default=None)
SLOTS = option(
    "--slots", "-s", metavar="N", read=whole(32), help="jobs per worker at once", default=None
)
BURST = option("--burst", "-b", metavar="N", read=whole(1024), help="jobs per burst", default=None)
JOB_SECONDS = option(
    "--job-seconds",
    "-j",
    metavar="SECONDS",
    read=seconds(0.5),
    help="each job's sleep",
    default=None,
)
LOAD = option("--load", metavar="PROFILE", help="arrivals instead of a burst", default=None)
TAKE_LATENCY, WAKE_LATENCY, HOLD, DONE_LATENCY = (
    option(name, metavar="LATENCY", help="as jobbench run's", default=None)
    for name in ("--take-latency", "--wake-latency", "--hold", "--done-latency")
)
JSON = option("--json", help="print a JSON document instead of the table", default=False)


@dataclass(frozen=True)
class EachCommit:
    """What trend and bisect run at each commit, the same flags in the same order (--out to
    --lanes): where results go, the worker, one scenario's flags instead of a suite, the queue's
    CPU and the lanes. Both requests take them with one field, `group(EachCommit)`."""

    out: Path = OUT()
    worker: str = WORKER()
    take_ahead: int = TAKE_AHEAD()
    python: str | None = PYTHON()
    workers: int | None = WORKERS()
    slots: int | None = SLOTS()
    burst: int | None = BURST()
    job_seconds: float | None = JOB_SECONDS()
    load: str | None = LOAD()
    take_latency: str | None = TAKE_LATENCY()
    wake_latency: str | None = WAKE_LATENCY()
    hold: str | None = HOLD()
    done_latency: str | None = DONE_LATENCY()
    pin_queue: bool = PIN_QUEUE()
    lanes: int | str = LANES()

    def setup(self, repo: Path | None, suite: str | None, reps: int | None) -> SetupRequest:
        """The checkout, the rows and the worker. One latency flag given fills the others with
        `run`'s defaults."""
        from jobbench.core.scenario.config import LatencyFlags
        from jobbench.core.sdk_history.setup import ScenarioFlags, SetupRequest

        given = (self.take_latency, self.wake_latency, self.hold, self.done_latency)
        latency = None
        if any(value is not None for value in given):
            take, wake, hold, done = given
            defaults = LatencyFlags()
            latency = LatencyFlags(
                take or defaults.take,
                wake or defaults.wake,
                hold or defaults.hold,
                done or defaults.done,
            )
        scenario = ScenarioFlags(
            self.workers, self.slots, self.burst, self.job_seconds, self.load, latency
        )
        return SetupRequest(
            repo=repo,
            suite=suite,
            scenario=scenario,
            worker=self.worker,
            take_ahead=self.take_ahead,
            python=self.python,
            reps=reps,
            out=self.out,
            pin_queue=self.pin_queue,
            lanes=self.lanes,
        )


class CommitsRequest:
    """What trend's and bisect's requests make alike of their fields: the setup at each commit
    and the gate (the metric and the size floor). The fields are each request's own, declared
    there in its help's order; this class only names their types."""

    repo: Path | None
    suite: str | None
    reps: int | None
    metric: str | None
    max_regression: float
    each_commit: EachCommit

    @property
    def setup(self) -> SetupRequest:
        return self.each_commit.setup(self.repo, self.suite, self.reps)

    @property
    def gate(self) -> GateConfig:
        from jobbench.verdict.gate import GateConfig

        return GateConfig(self.metric, self.max_regression)


@dataclass(frozen=True)
class TrendRequest(CommitsRequest):
    """`jobbench trend`'s flags, in the order its help lists them."""

    revrange: str = argument("REVRANGE", "START..END (first-parent), or END")()
    repo: Path | None = REPO()
    suite: str | None = SUITE()
    tags: bool = flag(False, "--tags", help="only the tagged commits (and the start)")
    every: int = flag(
        1, "--every", metavar="N", read=whole(10), help="every Nth commit (and the end)"
    )
    reps: int | None = flag(
        None,
        "--reps",
        "-n",
        metavar="N",
        read=whole(5),
        help="reps a row per commit (default: suite's)",
    )
    metric: str | None = flag(
        None,
        "--metric",
        metavar="METRIC",
        help="each row's metric (default: its gated one, else time_to_p99_s)",
    )
    # The size floor of a change point, a fraction.
    max_regression: float = flag(
        "5%",
        "--max-regression",
        metavar="PERCENT",
        read=read_percent("--max-regression"),
        help="smallest change a change point may be, e.g. 5%",
    )
    html: Path | None = flag(
        None, "--html", metavar="FILE", read=path, help="also write the trend's page"
    )
    json_out: bool = JSON()  # --format json
    # table | json | a dashboard's (render/text/dashboard_formats.py)
    fmt: str = flag(
        "table",
        "--format",
        metavar="FORMAT",
        read=read_result_format,
        help="table | json | bmf | github-action-benchmark (the newest commit's rows)",
    )
    fail_on_change: bool = flag(
        False, "--fail-on-change", help="exit 1 on a slowdown no earlier trend reported"
    )
    budget_s: float = flag(
        "12h",
        "--budget",
        metavar="DURATION",
        read=parse_duration,
        help="no new commit starts past it (exit 3), e.g. 2h",
    )
    each_commit: EachCommit = group(EachCommit)
    cluster: ClusterRequest = group(ClusterRequest)
    quiet: bool = QUIET()

    def __post_init__(self) -> None:
        if self.json_out:  # --json is --format json
            object.__setattr__(self, "fmt", "json")


@dataclass(frozen=True)
class BisectRequest(CommitsRequest):
    """`jobbench bisect`'s flags, in the order its help lists them."""

    good: str = argument("GOOD", "a commit of --repo whose rows are fast")()
    bad: str = argument("BAD", "a later commit whose rows are slower")()
    repo: Path | None = REPO()
    suite: str | None = SUITE()
    metric: str | None = METRIC()
    max_regression: float = MAX_REGRESSION()
    reps: int | None = flag(
        None, "--reps", "-n", metavar="N", read=whole(5), help="first reps a side of each step"
    )
    max_reps: int = MAX_REPS()
    budget_s: float = BUDGET("3h")
    json_out: bool = JSON()
    each_commit: EachCommit = group(EachCommit)
    cluster: ClusterRequest = group(ClusterRequest)
    quiet: bool = QUIET()
