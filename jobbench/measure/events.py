"""One pass over a rep's event log (docs/events.md) into one EventScan: the record that both the
rep figures (metrics.py) and the plot series (series.py) are computed from, so a plot can never
disagree with the figure printed beside it.

Times are unit-agnostic: kept as the integers they came in, and only ordered and subtracted,
never compared with a constant. metrics.py scans the server's log (ns of `time.monotonic_ns()`),
series.py the rows saved in LABEL.events.jsonl (us from burst start: results/store.EventsWriter
floors (t - first submit) // 1000, which keeps their order, so both scans decide alike). Each
consumer converts to seconds once, with its own NS_PER_S or US_PER_S.

Rules: log order is causal per job, even where `t` (of takes) is not. A COMPLETED/FAILED `done`
always follows a fresh claim and deliver (requeue and retry put the job back in the queue), so
the last claim and deliver seen are those of the run that ended. A `done` of a job with no
`submit` in the log is a straggler from an earlier burst: not this rep's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from fake_queue.api import FLEET_EVENTS
from fake_queue.protocol import COMPLETED, FAILED, TERMINAL

# Jobs a worker actually ran to an answer: the ones with a meaningful claim -> done service time.
SERVED = frozenset({COMPLETED, FAILED})
# The worker routes whose every handled request the log records (a take, a job-done), so a
# request of theirs a fault answered in the handler's place is counted beside them; a `delay`
# fault's request goes on to its handler and is logged there. A job-stream chunk the queue
# took, a heartbeat and a job-stop poll are not logged at all: requests_per_job leaves them out.
COUNTED_ROUTES = frozenset({"job-take", "job-take-batch", "job-done"})


# The per-job records are plain slotted dataclasses, not frozen ones: a frozen one's __init__
# sets each field through object.__setattr__, four times as slow, and a simulated
# million-job rep makes two a job. Nothing changes them once made.
@dataclass(slots=True)
class Final:
    """A job's last terminal transition (a `retry` after it removes it again)."""

    t: int
    status: str
    worker: str | None
    claim: int | None  # when the run that ended was claimed; None: never claimed (cancelled)

    @property
    def served(self) -> bool:
        return self.status in SERVED


@dataclass(slots=True)
class Run:
    """A job in a worker's hands from `deliver` to its COMPLETED/FAILED `done` (end None: still
    held when the log ends). Every run held a slot, a failed one that was retried included."""

    worker: str
    start: int
    end: int | None


@dataclass(frozen=True, slots=True)
class TakeEvent:
    t: int  # answered
    worker: str
    asked: int
    got: int
    arrived: int
    kind: str


@dataclass(slots=True)
class EventScan:
    """Everything measured about one rep, times in the log's own unit."""

    submitted: dict[str, int] = field(default_factory=dict)  # job id -> when it was submitted
    final: dict[str, Final] = field(default_factory=dict)  # terminal jobs, in order of `done`
    runs: list[Run] = field(default_factory=list)  # closed ones in order of `done`, then open
    takes: list[TakeEvent] = field(default_factory=list)
    queue: list[tuple[int, int]] = field(default_factory=list)  # (t, +1 or -1), log order
    last: int = 0  # the latest `t`
    delivered: set[str] = field(default_factory=set)
    redelivered: set[str] = field(default_factory=set)  # delivered more than once
    doubled: set[str] = field(default_factory=set)  # answered again after they had ended
    faults: Counter[str] = field(default_factory=Counter)  # injected, by "route:kind"
    faulted: set[str] = field(default_factory=set)  # jobs a fault hit (a job-done refused...)
    fleet: list[Mapping[str, Any]] = field(default_factory=list)  # an autoscaled fleet's events
    refreshes: int = 0  # workers the platform replaced at their job's asking (refresh_worker)
    # From the rep's first submission on, in log order: job-done posts (an answer, a progress
    # update, one the queue ignored as late) and takes or job-dones a fault answered instead.
    posts: int = 0
    refused: int = 0

    def recovered(self) -> int:
        """Jobs a fault hit that still completed: what the worker survived."""
        return sum(
            1 for job in self.faulted if (f := self.final.get(job)) and f.status == COMPLETED
        )

    def completed_times(self) -> list[int]:
        """When each COMPLETED job ended, sorted: what times to X % count (a failed job is not
        done work, so a candidate that fails jobs fast never looks faster)."""
        return sorted(f.t for f in self.final.values() if f.status == COMPLETED)

    def completed(self) -> Iterator[tuple[int, int, int]]:
        """(submit, claim, done) of each job whose final run completed: the latencies a user
        waited for a result (a job that failed fast is counted apart, never as a fast one)."""
        for job, f in self.final.items():
            if f.status == COMPLETED and f.claim is not None:
                yield self.submitted[job], f.claim, f.t

    def busy_spans(self) -> dict[str, list[tuple[int, int]]]:
        """Per worker, the (deliver, done) of its finished runs."""
        spans: dict[str, list[tuple[int, int]]] = {}
        for run in self.runs:
            if run.end is not None:
                spans.setdefault(run.worker, []).append((run.start, run.end))
        return spans


def scan_events(events: Iterable[Mapping[str, Any]], *, spans: bool = True) -> EventScan:
    """The one pass, in log order; keys missing from a saved row count as absent. `spans`:
    also the runs and the queue's depth steps (False: a burst's brief measure, which needs
    neither, leaves them empty)."""
    s = EventScan()
    claims: dict[str, int] = {}
    held: dict[str, tuple[int, str]] = {}  # delivered, not yet done or requeued: (t, worker)
    # Bound once, and a job's `done` read inline: a simulated rep's log has millions of events.
    submitted, final, runs = s.submitted, s.final, s.runs
    queue = s.queue.append if spans else _ignore
    last = 0
    for e in events:
        ev, job, t = e.get("ev"), str(e.get("job", "")), int(e.get("t", 0))
        if t > last:
            last = t
        if ev == "submit":  # latencies run from its intended time: a late driver hides none
            submitted[job] = int(e.get("intended", t))
            queue((t, 1))
        elif ev == "claim":
            claims[job] = t
            queue((t, -1))
        elif ev == "deliver":
            if spans:
                held[job] = (t, str(e.get("worker")))
            (s.redelivered if job in s.delivered else s.delivered).add(job)
        elif ev == "done":
            # The job's last terminal transition; a straggler from an earlier burst is not
            # this rep's, and a run it served held a slot from its deliver to here.
            ran = held.pop(job, None)
            status = e.get("status")
            if status in SERVED and submitted:  # only a worker's job-done serves a job
                s.posts += 1
            if job in submitted and status in TERMINAL:
                worker = e.get("worker")
                worker = None if worker is None else str(worker)
                final[job] = Final(t, str(status), worker, claims.get(job))
                if ran is not None and status in SERVED:
                    runs.append(Run(str(worker), ran[0], t))
        elif ev == "requeue":  # the take's client left: that delivery never reached the worker
            held.pop(job, None)
            queue((t, 1))
        elif ev == "retry":  # back in the queue: no longer terminal
            final.pop(job, None)
            queue((t, 1))
        elif ev == "take":
            s.takes.append(_take(e, t))
        elif ev == "ignored":  # a second answer for a job that had one: it ran twice
            s.posts += 1 if submitted else 0
            ended = final.get(job)
            if ended is not None and ended.served and not e.get("progress"):
                s.doubled.add(job)
        elif ev == "fault":
            route, kind = e.get("route"), str(e.get("kind"))
            s.faults[f"{route}:{kind}"] += 1
            if route in COUNTED_ROUTES and not kind.startswith("delay") and submitted:
                s.refused += 1
            if "job" in e:
                s.faulted.add(job)
        elif ev == "progress":
            s.posts += 1 if submitted else 0
        elif ev in FLEET_EVENTS:
            s.fleet.append(e)
        elif ev == "refresh":
            s.refreshes += 1
    s.last = last
    runs.extend(Run(w, t, None) for job, (t, w) in held.items() if job in submitted)
    return s


def _ignore(_: tuple[int, int]) -> None:
    pass


def _take(e: Mapping[str, Any], t: int) -> TakeEvent:
    return TakeEvent(
        t=t,
        worker=str(e.get("worker")),
        asked=int(e.get("asked", 0)),
        got=int(e.get("got", 0)),
        arrived=int(e.get("arrived", t)),
        kind=str(e.get("kind", "")),
    )
