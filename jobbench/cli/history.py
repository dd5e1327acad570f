"""`jobbench history`: flags -> HistoryRequest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jobbench.cli.app import Out, app, exit_with


@app.command()
def history(
    label: Annotated[
        str | None, typer.Argument(help="saved label (default: every label in --out)")
    ] = None,
    out: Out = Path("reports"),
) -> None:
    """List saved runs, newest first, with the LABEL~N names compare, gate and report take."""
    from jobbench.commands.history import HistoryRequest, history_command

    exit_with(lambda: history_command(HistoryRequest(label, out)))
