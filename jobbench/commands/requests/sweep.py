"""`jobbench sweep`'s request. Each axis is a list (`1,2,4,8`) or a range (`1..8`, `8..32+8`,
`1..64*2`), as written; the latencies' flags repeat for sampled values. A flag left out is None:
the [sweeps.NAME] table's key, else the default (commands/sweep.py DEFAULTS)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jobbench.commands.requests.flag import argument, flag, path, whole
from jobbench.commands.requests.shared import CLUSTER, OUT, QUIET, SEED, read_label
from jobbench.errors import UsageError
from jobbench.workers.policies import DRAIN, POLICIES, TAKE_AHEAD

AXIS = "a list or a range: 1,2,4,8 | 8..32+8 | 1..64*2"
LATENCY_AXIS = "seconds as a list or a range, or one kind:a,b; repeatable"


def read_processes(text: str) -> int:
    processes = whole(2)(text)
    if processes < 1:
        raise UsageError(f"--processes {processes}: use 1 or more (default: one per CPU)")
    return processes


@dataclass(frozen=True)
class SweepRequest:
    """`jobbench sweep`'s flags, in the order its help lists them."""

    name: str | None = argument(
        "NAME", "a [sweeps.NAME] table of jobbench.toml, or built-in fixes", default=None
    )()
    workers: str | None = flag(None, "--workers", "-w", metavar="LIST", help=f"workers (4): {AXIS}")
    slots: str | None = flag(None, "--slots", "-s", metavar="LIST", help="slots per worker (32)")
    take_ahead: str | None = flag(
        None, "--take-ahead", "-t", metavar="LIST", help="take-ahead K (0: off)"
    )
    job_seconds: str | None = flag(
        None, "--job-seconds", "-j", metavar="LIST", help="job seconds (0.5)"
    )
    take_latency: tuple[str, ...] | None = flag(
        None,
        "--take-latency",
        metavar="LATENCY",
        help=f"take latency (0.5): {LATENCY_AXIS}",
        repeat=True,
    )
    wake_latency: tuple[str, ...] | None = flag(
        None,
        "--wake-latency",
        metavar="LATENCY",
        help="wake latency (0.05), as --take-latency",
        repeat=True,
    )
    load: tuple[str, ...] | None = flag(
        None,
        "--load",
        metavar="PROFILE",
        help="an arrival profile (default: --burst); repeatable",
        repeat=True,
    )
    autoscale: tuple[str, ...] | None = flag(
        None,
        "--autoscale",
        metavar="SPEC",
        help="fixed, or an autoscaled fleet of up to --workers (queue-delay=4,active=1); "
        "repeatable",
        repeat=True,
    )
    policy: str | None = flag(
        None,
        "--policy",
        metavar="LIST",
        help=f"{','.join(POLICIES)} (default: {DRAIN} for K 0, else {TAKE_AHEAD})",
    )
    burst: int | None = flag(
        None, "--burst", "-b", metavar="N", read=whole(1024), help="jobs per burst (1024)"
    )
    hold: str | None = flag(None, "--hold", metavar="SECONDS", help="long-poll hold (20)")
    done_latency: str | None = flag(
        None, "--done-latency", metavar="LATENCY", help="done latency (0), every cell"
    )
    reps: int | None = flag(
        None, "--reps", "-n", metavar="N", read=whole(3), help="reps per cell, medians (1)"
    )
    seed: int | None = SEED()
    processes: int | None = flag(  # None: one per CPU
        None,
        "--processes",
        metavar="N",
        read=read_processes,
        help="processes simulating cells (default: one a CPU; not with --cluster)",
    )
    cluster: str | None = CLUSTER()  # a Ray cluster's address: the cells run there as tasks
    label: str = flag(
        "sweep",
        "--label",
        "-l",
        metavar="NAME",
        read=read_label,
        help="saves NAME.sweep.json and .csv",
    )
    out: Path = OUT()
    html: Path | None = flag(
        None, "--html", metavar="FILE", read=path, help="also write the heatmap page"
    )
    x: str = flag("workers", "--x", metavar="AXIS", help="heatmap columns: an axis")
    y: str = flag("slots", "--y", metavar="AXIS", help="heatmap rows: an axis")
    color: str = flag(
        "time-to-p99",
        "--color",
        metavar="FIGURE",
        help="heatmap colour: time-to-p99 | efficiency | steady-p99 | cost",
    )
    quiet: bool = QUIET()
