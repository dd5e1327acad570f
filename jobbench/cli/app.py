"""The Typer app, the options several commands share (spelled once), and how a command's
exit code or error reaches the shell."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from fake_queue.options import LATENCY_HELP, TAKE_EXTRA_HELP
from fake_queue.queue.scalers import SCALERS
from jobbench.cli.conventions import App, Group
from jobbench.cli.values import decimal, seconds, whole
from jobbench.errors import INTERRUPTED, Interrupted, JobbenchError
from jobbench.procs.signals import interrupts_then_exit
from jobbench.render.text.progress import end_progress
from jobbench.workers.policies import POLICIES

app = App(
    cls=Group,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from jobbench import __version__

        typer.echo(f"jobbench {__version__}")
        raise typer.Exit(0)


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_print_version, is_eager=True, help="print the version"
        ),
    ] = False,
) -> None:
    """Benchmark queue-based serverless workers against a fake RunPod queue."""


Opt = typer.Option
Arg = typer.Argument

SCALER_EXAMPLES = " or ".join(f"{rule.name}={rule.example}" for rule in SCALERS.values())

# Options that several commands share, spelled once. Every option names its value (N, SECONDS,
# PATH...) and reads a number with jobbench's message (cli/values.py); the short flags are the
# common options' (README, "Commands"): -w -s -b -j -t -n -l -o -q.
Autoscale = Annotated[
    str | None,
    Opt(
        metavar="SPEC",
        help=f"an autoscaled fleet of up to --workers: {SCALER_EXAMPLES}, then "
        "active=0,idle=5,cold=0.5,every=1,step=N (docs/fleet.md)",
    ),
]
Workers = Annotated[
    int, Opt("--workers", "-w", metavar="N", parser=whole(4), help="worker processes")
]
Slots = Annotated[
    int | None,
    Opt(
        "--slots",
        "-s",
        metavar="N",
        parser=whole(32),
        help="concurrent jobs per worker (default 32; a command worker must say)",
    ),
]
TakeAhead = Annotated[
    int,
    Opt(
        "--take-ahead",
        "-t",
        metavar="K",
        parser=whole(32),
        help="extra jobs a worker takes while busy (0: off)",
    ),
]
Worker = Annotated[
    str, Opt(metavar="KIND|CMD", help="runpod | model | a command like 'python h.py'")
]
Policy = Annotated[
    str | None,
    Opt(
        metavar="POLICY",
        help=f"model worker: {' | '.join(POLICIES)}",
    ),
]
Sdk = Annotated[
    Path | None, Opt(metavar="PATH", help="runpod-python checkout to put first on the path")
]
Python = Annotated[str | None, Opt(metavar="PYTHON", help="python that runs the runpod workers")]
JobSeconds = Annotated[
    float,
    Opt(
        "--job-seconds",
        "-j",
        metavar="SECONDS",
        parser=seconds(0.5),
        help="how long each bench job sleeps",
    ),
]
InputJson = Annotated[str | None, Opt("--input", metavar="JSON", help="JSON input for every job")]
Inputs = Annotated[Path | None, Opt(metavar="FILE", help="JSONL file of job inputs, cycled")]
Latency = Annotated[str, Opt(metavar="LATENCY", help=LATENCY_HELP)]
Hold = Annotated[str, Opt(metavar="SECONDS", help="long-poll hold, seconds")]
TakeExtra = Annotated[int, Opt("--take-extra", metavar="N", parser=whole(4), help=TAKE_EXTRA_HELP)]
Seed = Annotated[int | None, Opt(metavar="N", parser=whole(7), help="seed for sampled latencies")]
Out = Annotated[Path, Opt("--out", "-o", metavar="DIR", help="folder for results")]
Quiet = Annotated[bool, Opt("--quiet", "-q", help="no progress output")]
Cluster = Annotated[
    str | None,
    Opt(
        metavar="ADDRESS",
        help="run on a Ray cluster (the workers, or a sweep's cells): ray://HOST:PORT, HOST:PORT "
        "or auto (RAY_ADDRESS); needs pip install 'jobbench[ray]' (docs/distributed.md)",
    ),
]
WorkerCpus = Annotated[
    float | None,
    Opt(
        metavar="N",
        parser=decimal(1),
        help="--cluster: CPUs each worker's Ray actor reserves (default 1)",
    ),
]
PinQueue = Annotated[
    bool, Opt(help="embedded queue on a CPU of its own, workers on the others (Linux)")
]
Baseline = Annotated[
    str, Arg(metavar="BASELINE", help="result file, saved label, variant or git ref")
]
Candidate = Annotated[str, Arg(metavar="CANDIDATE", help="the same kinds of name as BASELINE")]
Metric = Annotated[
    str | None,
    Opt(
        metavar="METRIC",
        help="metric the verdict rests on (default: each scenario's, else time_to_p99_s)",
    ),
]
RepsAuto = Annotated[
    str | None,
    Opt("--reps", "-n", metavar="N|auto", help="reps a side: N, or auto (settle unsettled rows)"),
]
MaxReps = Annotated[
    int,
    Opt(metavar="N", parser=whole(30), help="--reps auto: at most this many reps a side per row"),
]
Budget = Annotated[
    str, Opt(metavar="DURATION", help="--reps auto: wall time for the whole call, e.g. 45m")
]
Wide = Annotated[bool, Opt("--wide", help="table: every metric, not only the gated one")]
Lanes = Annotated[
    str,
    Opt(
        metavar="N|auto",
        help="rows run side by side, each with its own queue and workers (auto: every row, "
        "while the machine holds them; 1: one at a time)",
    ),
]
MaxCostRegression = Annotated[
    str | None,
    Opt(
        metavar="PCT",
        help="also judge autoscaled rows on their cost (worker-seconds): this much more passes",
    ),
]
MaxRegression = Annotated[str, Opt(metavar="PERCENT", help="slowdown still passing, e.g. 5%")]
Repo = Annotated[Path | None, Opt(metavar="PATH", help="SDK checkout whose git refs are names")]
Format = Annotated[
    str,
    Opt(
        "--format",
        metavar="FORMAT",
        help="table | markdown | json | csv | bmf | github-action-benchmark (B's figures)",
    ),
]


def fail(exc: JobbenchError) -> NoReturn:
    end_progress(after_ctrl_c=isinstance(exc, Interrupted))
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(exc.exit_code)


def exit_with(command: Callable[[], int]) -> NoReturn:
    """Run a command; its code is the exit code, a JobbenchError a one-line error. SIGTERM (a CI
    timeout, a cancelled job) is a Ctrl-C for the whole command, and either exits 130 wherever
    it lands: a command that owns processes or a result has already stopped and saved them.
    One that comes once the command is over is ignored: the process is only exiting."""
    try:
        with interrupts_then_exit():
            code = command()
    except JobbenchError as exc:
        fail(exc)
    except KeyboardInterrupt:
        end_progress(after_ctrl_c=True)
        typer.echo(f"error: {INTERRUPTED}", err=True)
        raise typer.Exit(Interrupted.exit_code) from None
    raise typer.Exit(code)
