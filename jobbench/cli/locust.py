"""`jobbench locust`: flags -> LocustRequest."""

from __future__ import annotations

from jobbench.cli.app import app
from jobbench.cli.flags import takes
from jobbench.commands.requests.locust import LocustRequest


@app.command()
@takes(LocustRequest)
def locust(request: LocustRequest) -> int:
    """Locust's web UI (or --headless) driving jobs through the fake queue or --endpoint."""
    from jobbench.commands.locust import locust_command

    return locust_command(request)
