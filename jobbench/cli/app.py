"""The Typer app, and how a command's exit code or error reaches the shell. The commands' flags
are their requests' (jobbench/commands/requests/)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, NoReturn

import typer

from jobbench.cli.conventions import App, Group
from jobbench.errors import INTERRUPTED, Interrupted, JobbenchError
from jobbench.procs.signals import interrupts_then_exit
from jobbench.render.text.progress import end_progress

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
