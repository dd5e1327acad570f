"""`jobbench compare` and `jobbench gate`: flags -> CompareRequest (the gate's by GateRequest)."""

from __future__ import annotations

from jobbench.cli.app import app
from jobbench.cli.flags import takes
from jobbench.commands.requests.compare import CompareRequest, GateRequest


@app.command()
@takes(CompareRequest)
def compare(request: CompareRequest) -> int:
    """Compare a candidate against a baseline, side by side, with a verdict.

    --reps defaults to the suite's, or to auto with --fail-on-regression."""
    return _compare(request)


@app.command()
@takes(GateRequest)
def gate(request: GateRequest) -> int:
    """CI perf gate: exit 0 pass, 1 regression, 3 inconclusive."""
    return _compare(request.comparison())


def _compare(request: CompareRequest) -> int:
    from jobbench.commands.compare import compare_command
    from jobbench.render.text.progress import make_progress

    return compare_command(request, make_progress(request.quiet)[1])
