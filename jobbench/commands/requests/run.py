"""`jobbench run`'s request: its flags, typed; raw strings (latencies, rates, the worker) are read
by the command, where the scenario is built."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fake_queue.options import TAKE_EXTRA_HELP
from fake_queue.queue.scalers import SCALERS
from jobbench.commands.requests.flag import flag, group, path, seconds, whole
from jobbench.commands.requests.shared import (
    DONE_LATENCY,
    HOLD,
    INPUT_JSON,
    INPUTS,
    JOB_SECONDS,
    OUT,
    PIN_QUEUE,
    POLICY,
    PYTHON,
    QUIET,
    SDK,
    SEED,
    SLOTS,
    TAKE_AHEAD,
    TAKE_LATENCY,
    WAKE_LATENCY,
    WORKER,
    WORKERS,
    ClusterRequest,
    read_fail_ratio,
    read_label,
    read_result_format,
)
from jobbench.core.scenario.checks import REPS, check_count
from jobbench.errors import UsageError

if TYPE_CHECKING:
    from jobbench.core.scenario.config import LatencyFlags

SCALER_EXAMPLES = " or ".join(f"{rule.name}={rule.example}" for rule in SCALERS.values())

TARGETS = ("fake", "sim")  # --target; a live endpoint is --endpoint


def read_reps(text: str) -> int:
    count = whole(5)(text)
    check_count(REPS, count)
    return count


def read_target(text: str) -> str:
    if text not in TARGETS:
        raise UsageError(
            f"--target {text!r}: use fake or sim (a live endpoint is --endpoint URL|ID)"
        )
    return text


@dataclass(frozen=True)
class RunRequest:
    """`jobbench run`'s flags, in the order its help lists them."""

    workers: int = WORKERS()
    slots: int | None = SLOTS()  # None: not given (core/scenario/build.py resolve_slots)
    burst: int = flag(1024, "--burst", "-b", metavar="N", read=whole(1024), help="jobs per burst")
    job_seconds: float = JOB_SECONDS()
    take_ahead: int = TAKE_AHEAD()
    worker: str = WORKER()
    policy: str | None = POLICY()
    sdk: Path | None = SDK()
    python: str | None = PYTHON()
    input_json: str | None = INPUT_JSON()
    inputs: Path | None = INPUTS()
    reps: int = flag(
        5,
        "--reps",
        "-n",
        metavar="N",
        read=read_reps,
        help="bursts to run; figures are medians over reps",
    )
    label: str = flag(
        "run", "--label", "-l", metavar="NAME", read=read_label, help="name of the saved result"
    )
    out: Path = OUT()
    server: str | None = flag(
        None, "--server", metavar="URL", help="an already running fake queue URL"
    )
    api_key: str | None = flag(
        None,
        "--api-key",
        metavar="KEY",
        help="key of the --server queue, or of --endpoint (else RUNPOD_API_KEY)",
    )
    take_latency: str = TAKE_LATENCY()
    wake_latency: str = WAKE_LATENCY()
    hold: str = HOLD()
    done_latency: str = DONE_LATENCY()
    take_extra: int = flag(0, "--take-extra", metavar="N", read=whole(4), help=TAKE_EXTRA_HELP)
    seed: int | None = SEED()
    pin_queue: bool = PIN_QUEUE()
    events: bool = flag(True, help="save raw events to LABEL.events.jsonl")
    json_out: bool = flag(False, "--json", help="print only the result JSON")  # --format json
    # table | json | a dashboard's (render/text/dashboard_formats.py)
    fmt: str = flag(
        "table",
        "--format",
        metavar="FORMAT",
        read=read_result_format,
        help="table | json | bmf | github-action-benchmark",
    )
    quiet: bool = QUIET()
    html: Path | None = flag(
        None, "--html", metavar="FILE", read=path, help="also write the HTML report (plots) here"
    )
    endpoint: str | None = flag(
        None,
        "--endpoint",
        metavar="URL|ID",
        help="live endpoint: a URL ending in /v2/ID, or an endpoint id (no workers)",
    )
    submit_rate: str | None = flag(
        None,
        "--submit-rate",
        metavar="RATE",
        help="live: /run pace, N/s or off (default: RunPod's 1000 per 10 s)",
    )
    yes: bool = flag(False, "--yes", help="live: skip the confirmation of bursts over 100 jobs")
    faults: tuple[str, ...] = flag(
        (),
        "--fault",
        metavar="ROUTE:KIND:RATE",
        help="queue fault, repeatable: job-done:500:0.1, job-done:drop:0.05, run:429:0.1",
        repeat=True,
    )
    worker_faults: tuple[str, ...] = flag(
        (),
        "--worker-fault",
        metavar="FAULT",
        help="worker fault each rep, repeatable: kill:AT[:wN] or pause:AT:FOR[:wN]",
        repeat=True,
    )
    target: str = flag(
        "fake",
        "--target",
        metavar="fake|sim",
        read=read_target,
        help="fake: the fake queue and worker processes; sim: simulated in virtual time",
    )
    # An arrival profile (core/scenario/load_profiles.py); None: --burst
    load: str | None = flag(
        None,
        "--load",
        metavar="PROFILE",
        help="arrivals instead of one burst: rate:40/s:for:30s, poisson:R/s:for:D, "
        "ramp:10-50/s:over:D, bursts:N:every:T:for:D, trace:FILE; stages joined by ','",
    )
    # The watchdog's stall bound (core/real_workers/watchdog.py)
    stall_after: float | None = flag(
        None,
        "--stall-after",
        metavar="SECONDS",
        read=seconds(10),
        help="watchdog: seconds without work that make a stall (default: from the jobs)",
    )
    # The share of jobs that may end badly before the run exits 4. None allows none, unless
    # faults are asked for: then there is no limit, since their failures are the measurement.
    max_fail_ratio: float | None = flag(
        None,
        "--max-fail-ratio",
        metavar="RATIO",
        read=read_fail_ratio,
        help="share of jobs that may end badly (failed, timed out, lost, unfinished) "
        "before run exits 4 (default 0; with --fault/--worker-fault, no limit)",
    )
    # core/scenario/fleet_spec.py; None: a fixed fleet
    autoscale: str | None = flag(
        None,
        "--autoscale",
        metavar="SPEC",
        help=f"an autoscaled fleet of up to --workers: {SCALER_EXAMPLES}, then "
        "active=0,idle=5,cold=0.5,every=1,step=N (docs/fleet.md)",
    )
    cluster: ClusterRequest = group(ClusterRequest)

    def __post_init__(self) -> None:
        if self.json_out:  # --json is --format json
            object.__setattr__(self, "fmt", "json")

    @property
    def latency(self) -> LatencyFlags:
        """The latency flags as given, read when the scenario is built."""
        from jobbench.core.scenario.config import LatencyFlags

        return LatencyFlags(
            self.take_latency, self.wake_latency, self.hold, self.done_latency, self.take_extra
        )
