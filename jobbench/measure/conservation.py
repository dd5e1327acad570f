"""After every rep: no job lost or counted twice, by the queue's own books and by its event log.
A run that fails this is not measured (RunFailed names what does not add up)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from fake_queue.api import LogHead
from jobbench.errors import RunFailed


def check_conservation(
    state: dict[str, Any], events: Iterable[dict[str, Any]] | LogHead, burst: int | None
) -> None:
    """No job lost or counted twice: the server's books and the event log must both agree.
    `burst`: the jobs the rep submitted (None: a rep cut short, before every wave went in)."""
    counts = state["counts"]
    if state.get("conservation"):
        raise RunFailed(f"the queue's books do not balance: {state['conservation']}")
    terminal = sum(counts[k] for k in ("completed", "failed", "cancelled", "timed_out"))
    if burst is None:
        burst = counts["submitted"]
    if (
        counts["submitted"] != burst
        or terminal + counts["in_queue"] + counts["in_progress"] != (counts["submitted"])
    ):
        raise RunFailed(f"jobs lost: submitted {counts['submitted']} of {burst}, counts {counts}")
    done = Counter(_done_jobs(events))
    doubled = [job for job, n in done.items() if n > 1]
    if doubled:
        raise RunFailed(f"jobs counted twice: {doubled[:5]} ({len(doubled)} in all)")
    if len(done) != terminal:
        raise RunFailed(f"event log has {len(done)} finished jobs, the queue counts {terminal}")


def _done_jobs(events: Iterable[dict[str, Any]] | LogHead) -> Iterable[Any]:
    """The job of every `done` event; a compact log's by column (a simulated million-job rep's
    four million events would otherwise each be rebuilt as a dict for this one key)."""
    if isinstance(events, LogHead):
        return events.values_of("done", "job")
    return (e["job"] for e in events if e["ev"] == "done")
