"""The flags several commands take, each declared once: a request's field is `WORKERS()`, or
`WORKERS(8)` for a default of its own. Every option names its value (N, SECONDS, PATH...); the
short flags are the common options' (README, "Commands"): -w -s -b -j -t -n -l -o -q."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fake_queue.options import LATENCY_HELP
from jobbench.commands.requests.flag import decimal, option, path, seconds, whole
from jobbench.core.run.settle import DEFAULT_BUDGET_S, DEFAULT_MAX_REPS, parse_duration
from jobbench.core.scenario.checks import check_label
from jobbench.errors import UsageError
from jobbench.workers.policies import POLICIES

# ---- the fleet and its worker ------------------------------------------------------------

WORKERS = option("--workers", "-w", metavar="N", read=whole(4), help="worker processes", default=4)
SLOTS = option(
    "--slots",
    "-s",
    metavar="N",
    read=whole(32),
    help="concurrent jobs per worker (default 32; a command worker must say)",
    default=None,
)
TAKE_AHEAD = option(
    "--take-ahead",
    "-t",
    metavar="K",
    read=whole(32),
    help="extra jobs a worker takes while busy (0: off)",
    default=0,
)
WORKER = option(
    "--worker",
    metavar="KIND|CMD",
    help="runpod | model | a command like 'python h.py'",
    default="runpod",
)
POLICY = option(
    "--policy", metavar="POLICY", help=f"model worker: {' | '.join(POLICIES)}", default=None
)
SDK = option(
    "--sdk",
    metavar="PATH",
    read=path,
    help="runpod-python checkout to put first on the path",
    default=None,
)
PYTHON = option(
    "--python", metavar="PYTHON", help="python that runs the runpod workers", default=None
)

# ---- the jobs and the queue --------------------------------------------------------------

JOB_SECONDS = option(
    "--job-seconds",
    "-j",
    metavar="SECONDS",
    read=seconds(0.5),
    help="how long each bench job sleeps",
    default=0.5,
)
INPUT_JSON = option("--input", metavar="JSON", help="JSON input for every job", default=None)
INPUTS = option(
    "--inputs", metavar="FILE", read=path, help="JSONL file of job inputs, cycled", default=None
)
TAKE_LATENCY = option("--take-latency", metavar="LATENCY", help=LATENCY_HELP, default="0.5")
WAKE_LATENCY = option("--wake-latency", metavar="LATENCY", help=LATENCY_HELP, default="0.05")
HOLD = option("--hold", metavar="SECONDS", help="long-poll hold, seconds", default="20")
DONE_LATENCY = option("--done-latency", metavar="LATENCY", help=LATENCY_HELP, default="0")
SEED = option("--seed", metavar="N", read=whole(7), help="seed for sampled latencies", default=None)
PIN_QUEUE = option(
    help="embedded queue on a CPU of its own, workers on the others (Linux)", default=True
)


def read_fail_ratio(text: str) -> float:
    """--max-fail-ratio: the share of jobs that may end badly."""
    ratio = decimal(0.01)(text)
    if not 0.0 <= ratio <= 1.0:
        raise UsageError(f"--max-fail-ratio {ratio:g}: use a fraction like 0.01")
    return ratio


# ---- where results go, and what is said --------------------------------------------------

OUT = option(
    "--out", "-o", metavar="DIR", read=path, help="folder for results", default=Path("reports")
)
QUIET = option("--quiet", "-q", help="no progress output", default=False)


def read_label(text: str) -> str:
    """--label: it names the result's files."""
    check_label(text)
    return text


def read_result_format(text: str) -> str:
    """`run`'s and `trend`'s --format: table, json or a dashboard's
    (render/text/dashboard_formats.py)."""
    from jobbench.render.text.dashboard_formats import FORMATS  # pydantic: when it runs

    formats = ("table", "json", *FORMATS)
    if text not in formats:
        raise UsageError(f"--format {text}: use one of {', '.join(formats)}")
    return text


# ---- the verdict and its reps ------------------------------------------------------------


def read_lanes(text: str) -> int | str:
    from jobbench.core.run.lanes import parse_lanes  # the run loop's: read when it runs

    return parse_lanes(text)


def read_percent(flag: str) -> Callable[[str], float]:
    """`5%`, `5` or `0.05` as a fraction, read as the gate reads it."""

    def read(text: str) -> float:
        from jobbench.results.gate import parse_percent  # the gate's: read when it runs

        return parse_percent(text, flag)

    return read


METRIC = option(
    "--metric",
    metavar="METRIC",
    help="metric the verdict rests on (default: each scenario's, else time_to_p99_s)",
    default=None,
)
MAX_REGRESSION = option(
    "--max-regression",
    metavar="PERCENT",
    read=read_percent("--max-regression"),
    help="slowdown still passing, e.g. 5%",
    default="5%",
)
MAX_REPS = option(
    "--max-reps",
    metavar="N",
    read=whole(30),
    help="--reps auto: at most this many reps a side per row",
    default=DEFAULT_MAX_REPS,
)
BUDGET = option(
    "--budget",
    metavar="DURATION",
    read=parse_duration,
    help="--reps auto: wall time for the whole call, e.g. 45m",
    default=f"{DEFAULT_BUDGET_S / 60:g}m",
)
LANES = option(
    "--lanes",
    metavar="N|auto",
    read=read_lanes,
    help="rows run side by side, each with its own queue and workers (auto: every row, "
    "while the machine holds them; 1: one at a time)",
    default="auto",
)

# ---- a Ray cluster -----------------------------------------------------------------------


def read_worker_cpus(text: str) -> float:
    cpus = decimal(1)(text)
    if cpus <= 0:
        raise UsageError(f"--worker-cpus {cpus:g}: use a number above 0, like 1")
    return cpus


CLUSTER = option(
    "--cluster",
    metavar="ADDRESS",
    help="run on a Ray cluster (the workers, or a sweep's cells): ray://HOST:PORT, HOST:PORT "
    "or auto (RAY_ADDRESS); needs pip install 'jobbench[ray]' (docs/distributed.md)",
    default=None,
)
WORKER_CPUS = option(
    "--worker-cpus",
    metavar="N",
    read=read_worker_cpus,
    help="--cluster: CPUs each worker's Ray actor reserves (default 1)",
    default=None,
)


@dataclass(frozen=True)
class ClusterRequest:
    """--cluster and --worker-cpus as given (None: no cluster; the workers run here). A command
    that can place its workers on a cluster takes both with one field: `group(ClusterRequest)`
    (commands/cluster.py reads them)."""

    address: str | None = CLUSTER()
    worker_cpus: float | None = WORKER_CPUS()
