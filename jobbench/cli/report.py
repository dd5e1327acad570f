"""`jobbench report`: flags -> ReportRequest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jobbench.cli.app import (
    Opt,
    app,
    exit_with,
)
from jobbench.cli.values import whole


@app.command()
def report(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="saved label, result file or A-vs-B.json")
    ],
    html: Annotated[Path, Opt(metavar="FILE", help="the HTML file to write")],
    rep: Annotated[
        int | None, Opt(metavar="N", parser=whole(1), help="rep to plot (default: the last)")
    ] = None,
    out: Annotated[Path, Opt("--out", "-o", metavar="DIR", help="folder of saved labels")] = Path(
        "reports"
    ),
    open_browser: Annotated[bool, Opt("--open", help="open it in the web browser")] = False,
) -> None:
    """Write a self-contained HTML report: tables and plots of where the time goes."""
    from jobbench.commands.report import ReportRequest, report_command

    exit_with(lambda: report_command(ReportRequest(name, html, out, rep, open_browser)))
