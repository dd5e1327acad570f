"""`jobbench run`: flags -> RunRequest."""

from __future__ import annotations

from jobbench.cli.app import app
from jobbench.cli.flags import takes
from jobbench.commands.requests.run import RunRequest


@app.command()
@takes(RunRequest)
def run(request: RunRequest) -> int:
    """Run bursts through worker processes (or at a live --endpoint); median / min / max."""
    from jobbench.commands.run import run_command

    return run_command(request)
