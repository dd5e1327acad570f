"""The workers' requests in a rep, per completed job (docs/metrics.md, "Requests per job"): what
the workers asked of the queue to get the rep's jobs done, from the event log alone.

Counted from the rep's first submission on: every take (a long-poll too, however it ended: with
jobs, empty when its hold ran out, or gone), every job-done post (an answer, a progress update,
a late one the queue ignored), and every take or job-done a fault answered in its handler's
place (events.COUNTED_ROUTES). Heartbeats, job-stop polls and the job-stream chunks the queue
took are not in the log, so not here: a worker whose heartbeats or stop polls multiply is not
seen by this figure.
"""

from __future__ import annotations

from typing import Any

from jobbench.measure.events import EventScan
from jobbench.measure.figures import round6


def request_figures(s: EventScan, start: int, completed: int) -> dict[str, Any]:
    """The rep's `requests` block: takes answered at or after `start` (the takes figure's own
    window), job-done posts and refused requests, and all of them per completed job (None
    when no job completed: a rep that did nothing has no cost per job)."""
    takes = sum(1 for take in s.takes if take.t >= start)
    total = takes + s.posts + s.refused
    return {
        "takes": takes,
        "posts": s.posts,
        "refused": s.refused,
        "per_job": round6(total / completed) if completed else None,
    }
