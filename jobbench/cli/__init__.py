"""The command line (Typer only): each command's flags -> one frozen, typed request -> its module
in jobbench/commands/ -> exit code. Importing this package registers every command on `app`."""

from __future__ import annotations

import importlib
import sys

import typer

from jobbench.cli.app import app
from jobbench.errors import EXIT_USAGE, JobbenchError

# Each module registers its commands on `app`, in this order: the order `jobbench --help` lists.
COMMAND_MODULES = ("run", "queue", "compare", "report", "locust")
for _module in COMMAND_MODULES:
    importlib.import_module(f"jobbench.cli.{_module}")

__all__ = ["app", "main"]


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except JobbenchError as exc:  # pragma: no cover - commands catch their own
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code or EXIT_USAGE)
