"""`jobbench sweep [NAME]`: flags -> SweepRequest. Each axis is a list (`1,2,4,8`) or a range
(`1..8`, `8..32+8`, `1..64*2`); the latencies' flags repeat for sampled values. A flag left out
is None: the [sweeps.NAME] table's key, else the default (commands/sweep.py DEFAULTS)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jobbench.cli.app import Arg, Cluster, Opt, Out, Quiet, Seed, app, exit_with
from jobbench.cli.values import whole
from jobbench.workers.policies import DRAIN, POLICIES, TAKE_AHEAD

AXIS = "a list or a range: 1,2,4,8 | 8..32+8 | 1..64*2"
LATENCY_AXIS = "seconds as a list or a range, or one kind:a,b; repeatable"


@app.command()
def sweep(
    name: Annotated[
        str | None,
        Arg(metavar="NAME", help="a [sweeps.NAME] table of jobbench.toml, or built-in fixes"),
    ] = None,
    workers: Annotated[
        str | None, Opt("--workers", "-w", metavar="LIST", help=f"workers (4): {AXIS}")
    ] = None,
    slots: Annotated[
        str | None, Opt("--slots", "-s", metavar="LIST", help="slots per worker (32)")
    ] = None,
    take_ahead: Annotated[
        str | None, Opt("--take-ahead", "-t", metavar="LIST", help="take-ahead K (0: off)")
    ] = None,
    job_seconds: Annotated[
        str | None, Opt("--job-seconds", "-j", metavar="LIST", help="job seconds (0.5)")
    ] = None,
    take_latency: Annotated[
        list[str] | None, Opt(metavar="LATENCY", help=f"take latency (0.5): {LATENCY_AXIS}")
    ] = None,
    wake_latency: Annotated[
        list[str] | None, Opt(metavar="LATENCY", help="wake latency (0.05), as --take-latency")
    ] = None,
    load: Annotated[
        list[str] | None,
        Opt(metavar="PROFILE", help="an arrival profile (default: --burst); repeatable"),
    ] = None,
    autoscale: Annotated[
        list[str] | None,
        Opt(
            metavar="SPEC",
            help="fixed, or an autoscaled fleet of up to --workers (queue-delay=4,active=1); "
            "repeatable",
        ),
    ] = None,
    policy: Annotated[
        str | None,
        Opt(
            metavar="LIST",
            help=f"{','.join(POLICIES)} (default: {DRAIN} for K 0, else {TAKE_AHEAD})",
        ),
    ] = None,
    burst: Annotated[
        int | None,
        Opt("--burst", "-b", metavar="N", parser=whole(1024), help="jobs per burst (1024)"),
    ] = None,
    hold: Annotated[str | None, Opt(metavar="SECONDS", help="long-poll hold (20)")] = None,
    done_latency: Annotated[
        str | None, Opt(metavar="LATENCY", help="done latency (0), every cell")
    ] = None,
    reps: Annotated[
        int | None,
        Opt("--reps", "-n", metavar="N", parser=whole(3), help="reps per cell, medians (1)"),
    ] = None,
    seed: Seed = None,
    processes: Annotated[
        int | None,
        Opt(
            metavar="N",
            parser=whole(2),
            help="processes simulating cells (default: one a CPU; not with --cluster)",
        ),
    ] = None,
    cluster: Cluster = None,
    label: Annotated[
        str, Opt("--label", "-l", metavar="NAME", help="saves NAME.sweep.json and .csv")
    ] = "sweep",
    out: Out = Path("reports"),
    html: Annotated[Path | None, Opt(metavar="FILE", help="also write the heatmap page")] = None,
    x: Annotated[str, Opt("--x", metavar="AXIS", help="heatmap columns: an axis")] = "workers",
    y: Annotated[str, Opt("--y", metavar="AXIS", help="heatmap rows: an axis")] = "slots",
    color: Annotated[
        str,
        Opt(
            "--color",
            metavar="FIGURE",
            help="heatmap colour: time-to-p99 | efficiency | steady-p99 | cost",
        ),
    ] = "time-to-p99",
    quiet: Quiet = False,
) -> None:
    """Simulate a grid of model-worker scenarios in virtual time: CSV, JSON, heatmap."""
    from jobbench.commands.sweep import SweepRequest, sweep_command

    request = SweepRequest(
        name=name,
        workers=workers,
        slots=slots,
        take_ahead=take_ahead,
        job_seconds=job_seconds,
        take_latency=tuple(take_latency) if take_latency else None,
        wake_latency=tuple(wake_latency) if wake_latency else None,
        load=tuple(load) if load else None,
        autoscale=tuple(autoscale) if autoscale else None,
        policy=policy,
        burst=burst,
        hold=hold,
        done_latency=done_latency,
        reps=reps,
        seed=seed,
        processes=processes,
        cluster=cluster,
        label=label,
        out=out,
        html=html,
        x=x,
        y=y,
        color=color,
        quiet=quiet,
    )
    exit_with(lambda: sweep_command(request))
