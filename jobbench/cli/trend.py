"""`jobbench trend` and `jobbench bisect` (SDK history over the commits of --repo): flags ->
TrendRequest, BisectRequest."""

from __future__ import annotations

from jobbench.cli.app import app
from jobbench.cli.flags import takes
from jobbench.commands.requests.trend import BisectRequest, TrendRequest


@app.command()
@takes(TrendRequest)
def trend(request: TrendRequest) -> int:
    """Run the suite at every commit of a range; find each row's change points."""
    from jobbench.commands.trend import trend_command

    return trend_command(request)


@app.command()
@takes(BisectRequest)
def bisect(request: BisectRequest) -> int:
    """Find the first commit between GOOD and BAD slower than GOOD: exit 0 found, 3 unsettled."""
    from jobbench.commands.bisect import bisect_command

    return bisect_command(request)
