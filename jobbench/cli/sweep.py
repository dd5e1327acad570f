"""`jobbench sweep [NAME]`: flags -> SweepRequest."""

from __future__ import annotations

from jobbench.cli.app import app
from jobbench.cli.flags import takes
from jobbench.commands.requests.sweep import SweepRequest


@app.command()
@takes(SweepRequest)
def sweep(request: SweepRequest) -> int:
    """Simulate a grid of model-worker scenarios in virtual time: CSV, JSON, heatmap."""
    from jobbench.commands.sweep import sweep_command

    return sweep_command(request)
