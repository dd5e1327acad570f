"""`jobbench report` and `jobbench history`: flags -> ReportRequest, HistoryRequest."""

from __future__ import annotations

from jobbench.cli.app import app
from jobbench.cli.flags import takes
from jobbench.commands.requests.report import HistoryRequest, ReportRequest


@app.command()
@takes(ReportRequest)
def report(request: ReportRequest) -> int:
    """Write a self-contained HTML report: tables and plots of where the time goes."""
    from jobbench.commands.report import report_command

    return report_command(request)


@app.command()
@takes(HistoryRequest)
def history(request: HistoryRequest) -> int:
    """List saved runs, newest first, with the LABEL~N names compare, gate and report take."""
    from jobbench.commands.history import history_command

    return history_command(request)
