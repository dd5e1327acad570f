"""The command line (Typer only): each command's flags -> one frozen, typed request -> its module
in jobbench/commands/ -> exit code. Importing this package registers every command on `app`."""

from __future__ import annotations

import importlib
import sys

import typer

from jobbench.cli.app import app
from jobbench.cli.conventions import (
    NO_ARGS_IS_HELP,
    ClickException,
    UsageError,
    sentence,
    usage_line,
)
from jobbench.errors import EXIT_USAGE, Interrupted, JobbenchError

# Each module registers its commands on `app`, in this order: the order `jobbench --help` lists.
COMMAND_MODULES = ("run", "sweep", "queue", "compare", "report", "trend", "locust")
for _module in COMMAND_MODULES:
    importlib.import_module(f"jobbench.cli.{_module}")

__all__ = ["app", "main"]


def main() -> None:
    """`jobbench ARGS`: Click parses (standalone_mode off, so its errors come here), the command
    runs and its exit code is the process's; every usage error is one line, exit code 2."""
    try:
        code = app(standalone_mode=False)
    except NO_ARGS_IS_HELP as exc:  # `jobbench` alone: the help, on stderr, exit 2 as ever
        typer.echo(exc.format_message(), err=True)  # type: ignore[attr-defined]
        sys.exit(EXIT_USAGE)
    except UsageError as exc:
        typer.echo(f"error: {usage_line(exc)}", err=True)
        sys.exit(EXIT_USAGE)
    except ClickException as exc:  # a file Click could not open, say
        typer.echo(f"error: {sentence(exc.format_message())}", err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:  # end of input at a question
        typer.echo("error: aborted; nothing was done", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(Interrupted.exit_code)
    except JobbenchError as exc:  # pragma: no cover - commands catch their own
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code or EXIT_USAGE)
    sys.exit(code if isinstance(code, int) else 0)
