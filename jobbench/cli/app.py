"""The Typer app, the options several commands share (spelled once), and how a command's
exit code or error reaches the shell."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from fake_queue.options import LATENCY_HELP
from jobbench.errors import Interrupted, JobbenchError
from jobbench.procs.signals import interrupts_then_exit

app = typer.Typer(
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
        typer.echo("error: interrupted (Ctrl-C or SIGTERM)", err=True)
        raise typer.Exit(Interrupted.exit_code) from None
    raise typer.Exit(code)
