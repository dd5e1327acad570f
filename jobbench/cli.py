"""The Typer app: parse flags into frozen config, call one core function, render, exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from jobbench.core.settle import DEFAULT_MAX_REPS
from jobbench.errors import EXIT_USAGE, JobbenchError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Benchmark queue-based serverless workers against a fake RunPod queue.",
)

Opt = typer.Option
LATENCY_HELP = "seconds, or kind:a,b (uniform, normal, lognormal), or samples:FILE"

# Options that several commands share, spelled once.
Workers = Annotated[int, Opt(help="worker processes")]
Slots = Annotated[int, Opt(help="concurrent jobs per worker")]
TakeAhead = Annotated[int, Opt(help="extra jobs a worker takes while busy (0: off)")]
Worker = Annotated[str, Opt(help="runpod | model | a command like 'python h.py'")]
Policy = Annotated[str | None, Opt(help="model worker: sdk-1.12 | drain | take-ahead")]
Sdk = Annotated[Path | None, Opt(help="runpod-python checkout to put first on the path")]
Python = Annotated[str | None, Opt(help="python that runs the runpod workers")]
JobSeconds = Annotated[float, Opt(help="how long each bench job sleeps")]
InputJson = Annotated[str | None, Opt("--input", help="JSON input for every job")]
Inputs = Annotated[Path | None, Opt(help="JSONL file of job inputs, cycled")]
Latency = Annotated[str, Opt(help=LATENCY_HELP)]
Hold = Annotated[str, Opt(help="long-poll hold, seconds")]
Seed = Annotated[int | None, Opt(help="seed for sampled latencies")]
Out = Annotated[Path, Opt(help="folder for results")]
Quiet = Annotated[bool, Opt(help="no progress output")]
PinQueue = Annotated[
    bool, Opt(help="embedded queue on a CPU of its own, workers on the others (Linux)")
]
Baseline = Annotated[str, typer.Argument(help="result file, saved label, variant or git ref")]
Candidate = Annotated[str, typer.Argument(help="the same kinds of name as BASELINE")]
Metric = Annotated[
    str | None,
    Opt(help="metric the verdict rests on (default: each scenario's, else time_to_p99_s)"),
]
RepsAuto = Annotated[
    str | None, Opt("--reps", help="reps a side: N, or auto (settle unsettled rows)")
]
MaxReps = Annotated[int, Opt(help="--reps auto: at most this many reps a side per row")]
Budget = Annotated[str, Opt(help="--reps auto: wall time for the whole call, e.g. 45m")]
Wide = Annotated[bool, Opt(help="table: every metric, not only the gated one")]
MaxRegression = Annotated[str, Opt(help="slowdown still passing, e.g. 5%")]
Repo = Annotated[Path | None, Opt(help="SDK checkout whose git refs are names")]
Format = Annotated[str, Opt("--format", help="table | markdown | json | csv")]


def fail(exc: JobbenchError) -> NoReturn:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(exc.exit_code)


def exit_with(command: Callable[[], int]) -> NoReturn:
    """Run a command; its code is the exit code, a JobbenchError a one-line error."""
    try:
        code = command()
    except JobbenchError as exc:
        fail(exc)
    raise typer.Exit(code)


@app.command()
def run(
    workers: Workers = 4,
    slots: Slots = 32,
    burst: Annotated[int, Opt(help="jobs per burst")] = 1024,
    job_seconds: JobSeconds = 0.5,
    take_ahead: TakeAhead = 0,
    worker: Worker = "runpod",
    policy: Policy = None,
    sdk: Sdk = None,
    python: Python = None,
    input_json: InputJson = None,
    inputs: Inputs = None,
    reps: Annotated[int, Opt(help="bursts to run; figures are medians over reps")] = 5,
    label: Annotated[str, Opt(help="name of the saved result")] = "run",
    out: Out = Path("reports"),
    server: Annotated[str | None, Opt(help="an already running fake queue URL")] = None,
    api_key: Annotated[
        str | None, Opt(help="key of the --server queue, or of --endpoint (else RUNPOD_API_KEY)")
    ] = None,
    take_latency: Latency = "0.5",
    wake_latency: Latency = "0.05",
    hold: Hold = "20",
    done_latency: Latency = "0",
    seed: Seed = None,
    pin_queue: PinQueue = True,
    events: Annotated[bool, Opt(help="save raw events to LABEL.events.jsonl")] = True,
    json_out: Annotated[bool, Opt("--json", help="print only the result JSON")] = False,
    quiet: Quiet = False,
    html: Annotated[Path | None, Opt(help="also write the HTML report (plots) here")] = None,
    endpoint: Annotated[
        str | None, Opt(help="live endpoint: a .../v2/ID URL or an endpoint id (no workers)")
    ] = None,
    submit_rate: Annotated[
        str | None, Opt(help="live: /run pace, N/s or off (default: RunPod's 1000 per 10 s)")
    ] = None,
    yes: Annotated[bool, Opt(help="live: skip the confirmation of bursts over 100 jobs")] = False,
) -> None:
    """Run bursts through worker processes (or at a live --endpoint); median / min / max."""
    flags = locals()
    from jobbench.commands.run import run_command

    exit_with(lambda: run_command(flags))


@app.command()
def serve(
    host: Annotated[str | None, Opt(help="bind address (default 127.0.0.1)")] = None,
    port: Annotated[int | None, Opt(help="port; 0 picks a free one (default 8000)")] = None,
    endpoint_id: Annotated[str | None, Opt(help="endpoint id in /v2/ID/ (default local)")] = None,
    take_latency: Annotated[str | None, Opt(help=LATENCY_HELP)] = None,
    wake_latency: Annotated[str | None, Opt(help=LATENCY_HELP)] = None,
    hold: Annotated[str | None, Opt(help="long-poll hold, seconds")] = None,
    done_latency: Annotated[str | None, Opt(help=LATENCY_HELP)] = None,
    api_key: Annotated[str | None, Opt(help="require this key on every route")] = None,
    rate_limits: Annotated[str | None, Opt(help="off | runpod")] = None,
    fault: Annotated[list[str] | None, Opt(help="ROUTE:KIND:RATE, repeatable")] = None,
    seed: Annotated[int | None, Opt(help="seed for sampled latencies and faults")] = None,
    config: Annotated[Path | None, Opt(help="TOML file with these settings")] = None,
) -> None:
    """Serve the fake RunPod queue (worker, client and bench-control APIs) until Ctrl-C."""
    flags = locals()  # the parameters, before anything else is defined here
    from fake_queue.__main__ import main as serve_main

    # Only flags given on the command line are passed, so --config values are not overridden.
    argv = [
        str(x)
        for key, value in flags.items()
        if value is not None and key != "fault"
        for x in ("--" + key.replace("_", "-"), value)
    ]
    argv += [x for rule in fault or [] for x in ("--fault", rule)]
    raise typer.Exit(serve_main(argv))


@app.command()
def compare(
    baseline: Baseline,
    candidate: Candidate,
    suite: Annotated[str | None, Opt(help="suite of scenarios (default seed)")] = None,
    reps: RepsAuto = None,
    max_reps: MaxReps = DEFAULT_MAX_REPS,
    budget: Budget = "45m",
    fmt: Format = "table",
    wide: Wide = False,
    out: Out = Path("reports"),
    repo: Repo = None,
    rerun: Annotated[bool, Opt(help="run variants even if a saved label exists")] = False,
    metric: Metric = None,
    max_regression: MaxRegression = "5%",
    fail_on_regression: Annotated[bool, Opt(help="exit 1 / 3 like jobbench gate")] = False,
    markdown: Annotated[Path | None, Opt(help="also write a PR-comment body here")] = None,
    quiet: Quiet = False,
    html: Annotated[Path | None, Opt(help="also write the HTML report (A and B plots)")] = None,
    pin_queue: PinQueue = True,
) -> None:
    """Compare a candidate against a baseline, side by side, with a verdict.

    --reps defaults to the suite's, or to auto with --fail-on-regression."""
    raise typer.Exit(_compare(locals(), fail_on_regression))


@app.command()
def gate(
    baseline: Baseline,
    candidate: Candidate,
    metric: Metric = None,
    max_regression: MaxRegression = "5%",
    suite: Annotated[str | None, Opt(help="suite, when a side runs now")] = None,
    reps: Annotated[str, Opt(help="reps a side: auto (settle unsettled rows) or N")] = "auto",
    max_reps: MaxReps = DEFAULT_MAX_REPS,
    budget: Budget = "45m",
    wide: Wide = False,
    out: Out = Path("reports"),
    repo: Repo = None,
    markdown: Annotated[Path | None, Opt(help="write a PR-comment body here")] = None,
    fmt: Format = "table",
    quiet: Quiet = False,
) -> None:
    """CI perf gate: exit 0 pass, 1 regression, 3 inconclusive."""
    raise typer.Exit(_compare({**locals(), "rerun": False}, True))


@app.command()
def report(
    name: Annotated[str, typer.Argument(help="saved label, result file or A-vs-B.json")],
    html: Annotated[Path, Opt(help="the HTML file to write")],
    rep: Annotated[int | None, Opt(help="rep to plot (default: the last)")] = None,
    out: Annotated[Path, Opt(help="folder of saved labels")] = Path("reports"),
    open_browser: Annotated[bool, Opt("--open", help="open it in the web browser")] = False,
) -> None:
    """Write a self-contained HTML report: tables and plots of where the time goes."""
    from jobbench.commands.report import ReportRequest, report_command

    exit_with(lambda: report_command(ReportRequest(name, html, out, rep, open_browser)))


@app.command()
def workers(
    server: Annotated[str, Opt(help="the fake queue's URL, e.g. http://10.0.0.5:8000")],
    workers: Workers = 4,
    slots: Slots = 32,
    take_ahead: TakeAhead = 0,
    worker: Worker = "runpod",
    policy: Policy = None,
    sdk: Sdk = None,
    python: Python = None,
    api_key: Annotated[str | None, Opt(help="key the queue was started with")] = None,
    name: Annotated[str | None, Opt(help="worker id prefix (default HOST-PID)")] = None,
) -> None:
    """Run N workers polling a fake queue that runs elsewhere, until Ctrl-C."""
    from jobbench.commands.workers import WorkersRequest, workers_command
    from jobbench.workers.spec import worker_spec

    def command() -> int:
        spec = worker_spec(worker, policy, take_ahead, sdk, python)
        return workers_command(WorkersRequest(server, workers, slots, spec, api_key, name))

    exit_with(command)


@app.command()
def locust(
    locust_args: Annotated[
        list[str] | None, typer.Argument(help="passed to Locust as is (after --)")
    ] = None,
    endpoint: Annotated[str | None, Opt(help="live endpoint URL or id (default: fake)")] = None,
    api_key: Annotated[str | None, Opt(help="key of --endpoint (else RUNPOD_API_KEY)")] = None,
    headless: Annotated[bool, Opt(help="no web UI: start at once")] = False,
    users: Annotated[int, Opt(help="concurrent Locust users")] = 10,
    spawn_rate: Annotated[float, Opt(help="users started per second")] = 10.0,
    run_time: Annotated[str | None, Opt(help="stop after e.g. 30s, 5m")] = None,
    json_file: Annotated[Path | None, Opt(help="Locust's final stats as JSON")] = None,
    csv: Annotated[str | None, Opt(help="Locust's CSV files prefix")] = None,
    html: Annotated[Path | None, Opt(help="Locust's HTML report")] = None,
    web_host: Annotated[str, Opt(help="web UI address")] = "127.0.0.1",
    web_port: Annotated[int, Opt(help="web UI port")] = 8089,
    master: Annotated[bool, Opt(help="Locust master node")] = False,
    locust_worker: Annotated[bool, Opt(help="Locust worker node (Locust's --worker)")] = False,
    processes: Annotated[int | None, Opt(help="Locust processes on this machine")] = None,
    max_fail_ratio: Annotated[float, Opt(help="JOB failure ratio that exits 4")] = 0.01,
    job_seconds: JobSeconds = 0.5,
    payload_bytes: Annotated[int, Opt(help="result bytes per bench job")] = 0,
    input_json: InputJson = None,
    inputs: Inputs = None,
    workers: Annotated[int, Opt(help="fake queue: worker processes")] = 4,
    slots: Annotated[int, Opt(help="fake queue: concurrent jobs per worker")] = 32,
    take_ahead: Annotated[int, Opt(help="fake queue: take-ahead (0: off)")] = 0,
    worker: Worker = "runpod",
    policy: Policy = None,
    sdk: Sdk = None,
    python: Python = None,
    take_latency: Latency = "0.5",
    wake_latency: Latency = "0.05",
    hold: Hold = "20",
    done_latency: Latency = "0",
    seed: Seed = None,
) -> None:
    """Locust's web UI (or --headless) driving jobs through the fake queue or --endpoint."""
    flags = locals()
    from jobbench.commands.locust import locust_command, locust_request

    exit_with(lambda: locust_command(locust_request(flags)))


def _compare(flags: dict[str, Any], fail_on_regression: bool) -> int:
    from jobbench.commands.compare import CompareRequest, compare_command
    from jobbench.core.settle import AUTO, parse_duration, parse_reps
    from jobbench.render.progress import make_progress
    from jobbench.results.gate import GateConfig, parse_percent

    try:
        reps = flags["reps"] or (AUTO if fail_on_regression else None)
        request = CompareRequest(
            baseline=flags["baseline"],
            candidate=flags["candidate"],
            suite=flags["suite"],
            reps=None if reps is None else parse_reps(reps),
            max_reps=flags["max_reps"],
            budget_s=parse_duration(flags["budget"]),
            fmt=flags["fmt"],
            wide=flags["wide"],
            out=flags["out"],
            repo=flags["repo"],
            rerun=flags["rerun"],
            fail_on_regression=fail_on_regression,
            gate=GateConfig(flags["metric"], parse_percent(flags["max_regression"])),
            markdown_file=flags["markdown"],
            html=flags.get("html"),
            pin_queue=flags.get("pin_queue", True),
        )
        return compare_command(request, make_progress(flags["quiet"])[1])
    except JobbenchError as exc:
        fail(exc)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except JobbenchError as exc:  # pragma: no cover - commands catch their own
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code or EXIT_USAGE)
