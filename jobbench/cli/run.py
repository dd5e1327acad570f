"""`jobbench run`: flags -> RunRequest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jobbench.cli.app import (
    Autoscale,
    Cluster,
    Hold,
    InputJson,
    Inputs,
    JobSeconds,
    Latency,
    Opt,
    Out,
    PinQueue,
    Policy,
    Python,
    Quiet,
    Sdk,
    Seed,
    Slots,
    TakeAhead,
    TakeExtra,
    Worker,
    WorkerCpus,
    Workers,
    app,
    exit_with,
)
from jobbench.cli.values import decimal, seconds, whole


@app.command()
def run(
    workers: Workers = 4,
    slots: Slots = None,
    burst: Annotated[
        int, Opt("--burst", "-b", metavar="N", parser=whole(1024), help="jobs per burst")
    ] = 1024,
    job_seconds: JobSeconds = 0.5,
    take_ahead: TakeAhead = 0,
    worker: Worker = "runpod",
    policy: Policy = None,
    sdk: Sdk = None,
    python: Python = None,
    input_json: InputJson = None,
    inputs: Inputs = None,
    reps: Annotated[
        int,
        Opt(
            "--reps",
            "-n",
            metavar="N",
            parser=whole(5),
            help="bursts to run; figures are medians over reps",
        ),
    ] = 5,
    label: Annotated[
        str, Opt("--label", "-l", metavar="NAME", help="name of the saved result")
    ] = "run",
    out: Out = Path("reports"),
    server: Annotated[
        str | None, Opt(metavar="URL", help="an already running fake queue URL")
    ] = None,
    api_key: Annotated[
        str | None,
        Opt(
            metavar="KEY", help="key of the --server queue, or of --endpoint (else RUNPOD_API_KEY)"
        ),
    ] = None,
    take_latency: Latency = "0.5",
    wake_latency: Latency = "0.05",
    hold: Hold = "20",
    done_latency: Latency = "0",
    take_extra: TakeExtra = 0,
    seed: Seed = None,
    pin_queue: PinQueue = True,
    events: Annotated[bool, Opt(help="save raw events to LABEL.events.jsonl")] = True,
    json_out: Annotated[bool, Opt("--json", help="print only the result JSON")] = False,
    fmt: Annotated[
        str,
        Opt("--format", metavar="FORMAT", help="table | json | bmf | github-action-benchmark"),
    ] = "table",
    quiet: Quiet = False,
    html: Annotated[
        Path | None, Opt(metavar="FILE", help="also write the HTML report (plots) here")
    ] = None,
    endpoint: Annotated[
        str | None,
        Opt(
            metavar="URL|ID",
            help="live endpoint: a URL ending in /v2/ID, or an endpoint id (no workers)",
        ),
    ] = None,
    submit_rate: Annotated[
        str | None,
        Opt(metavar="RATE", help="live: /run pace, N/s or off (default: RunPod's 1000 per 10 s)"),
    ] = None,
    yes: Annotated[
        bool, Opt("--yes", help="live: skip the confirmation of bursts over 100 jobs")
    ] = False,
    fault: Annotated[
        list[str] | None,
        Opt(
            metavar="ROUTE:KIND:RATE",
            help="queue fault, repeatable: job-done:500:0.1, job-done:drop:0.05, run:429:0.1",
        ),
    ] = None,
    worker_fault: Annotated[
        list[str] | None,
        Opt(
            metavar="FAULT",
            help="worker fault each rep, repeatable: kill:AT[:wN] or pause:AT:FOR[:wN]",
        ),
    ] = None,
    target: Annotated[
        str,
        Opt(
            metavar="fake|sim",
            help="fake: the fake queue and worker processes; sim: simulated in virtual time",
        ),
    ] = "fake",
    load: Annotated[
        str | None,
        Opt(
            metavar="PROFILE",
            help="arrivals instead of one burst: rate:40/s:for:30s, poisson:R/s:for:D, "
            "ramp:10-50/s:over:D, bursts:N:every:T:for:D, trace:FILE; stages joined by ','",
        ),
    ] = None,
    stall_after: Annotated[
        float | None,
        Opt(
            metavar="SECONDS",
            parser=seconds(10),
            help="watchdog: seconds without work that make a stall (default: from the jobs)",
        ),
    ] = None,
    max_fail_ratio: Annotated[
        float | None,
        Opt(
            metavar="RATIO",
            parser=decimal(0.01),
            help="share of jobs that may end badly (failed, timed out, lost, unfinished) "
            "before run exits 4 (default 0; with --fault/--worker-fault, no limit)",
        ),
    ] = None,
    autoscale: Autoscale = None,
    cluster: Cluster = None,
    worker_cpus: WorkerCpus = None,
) -> None:
    """Run bursts through worker processes (or at a live --endpoint); median / min / max."""
    from jobbench.commands.cluster import ClusterRequest
    from jobbench.commands.run import RunRequest, run_command
    from jobbench.core.scenario.config import LatencyFlags

    request = RunRequest(
        workers=workers,
        slots=slots,
        burst=burst,
        job_seconds=job_seconds,
        take_ahead=take_ahead,
        worker=worker,
        policy=policy,
        sdk=sdk,
        python=python,
        input_json=input_json,
        inputs=inputs,
        reps=reps,
        label=label,
        out=out,
        server=server,
        api_key=api_key,
        latency=LatencyFlags(take_latency, wake_latency, hold, done_latency, take_extra),
        seed=seed,
        pin_queue=pin_queue,
        events=events,
        fmt="json" if json_out else fmt,
        quiet=quiet,
        html=html,
        endpoint=endpoint,
        submit_rate=submit_rate,
        yes=yes,
        faults=tuple(fault or ()),
        worker_faults=tuple(worker_fault or ()),
        stall_after=stall_after,
        max_fail_ratio=max_fail_ratio,
        target=target,
        load=load,
        autoscale=autoscale,
        cluster=ClusterRequest(cluster, worker_cpus),
    )
    exit_with(lambda: run_command(request))
