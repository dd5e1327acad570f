"""Workers that ran fewer jobs at once than their declared slots (`--slots`, a suite row's
`slots`), from a rep's event scan (events.py): the runpod SDK's own concurrency starts at 1, so
a handler started without a `concurrency_modifier` runs one job at a time whatever jobbench
was told, and every figure sized from the slots (the ideal, the efficiency, the rep's timeout)
then reads as the queue's fault.

A worker is below its slots when all three hold over the rep:

- it never held as many jobs as its slots at once (its runs, deliver to done, overlapping);
- none of its takes asked for as many: a worker that runs its slots asks for all of them when
  it is idle, as every rep starts;
- one of its takes found jobs queued, got every job it asked for, and left jobs in the queue:
  there was work it could have taken and did not ask for.

Pure: times in the log's unit, only ordered.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from itertools import accumulate
from typing import Any

from jobbench.measure.events import EventScan, Run


@dataclass(frozen=True)
class BelowSlots:
    """One worker below its declared slots, as a rep keeps it (`below_slots`)."""

    worker: str
    slots: int
    ran_at_most: int  # the most jobs it held at once
    asked_at_most: int  # the most jobs one of its takes asked for
    short_takes: int  # takes that got all they asked for and left jobs queued

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def below_slots(scan: EventScan, slots: int) -> list[BelowSlots]:
    """The workers of a fully scanned rep (`scan_events(spans=True)`) below `slots`, by id.
    The takes are read once; the queue's depth and the runs only for a worker none of whose
    takes asked for its slots (a simulated million-job rep of model workers pays for no more)."""
    asked: dict[str, int] = {}
    for take in scan.takes:
        asked[take.worker] = max(asked.get(take.worker, 0), take.asked)
    suspects = {worker for worker, most in asked.items() if most < slots}
    if not suspects:
        return []
    depth_after = _depth_after(scan.queue)
    short: dict[str, int] = {}
    for take in scan.takes:
        took_all = take.kind == "queued" and 0 < take.got == take.asked
        if take.worker in suspects and took_all and depth_after(take.arrived) > 0:
            short[take.worker] = short.get(take.worker, 0) + 1
    found = []
    for worker in sorted(short):
        ran = most_at_once([run for run in scan.runs if run.worker == worker])
        if ran < slots:
            found.append(BelowSlots(worker, slots, ran, asked[worker], short[worker]))
    return found


def most_at_once(runs: Sequence[Run]) -> int:
    """The most runs open at one instant (a run still open at the log's end stays open); a
    run that ends where another starts is not counted with it."""
    edges = [(run.start, 1) for run in runs] + [
        (run.end, -1) for run in runs if run.end is not None
    ]
    held = most = 0
    for _, step in sorted(edges):  # at one instant, the ends (-1) before the starts
        held += step
        most = max(most, held)
    return most


def _depth_after(steps: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The queue's depth once every step at or before an instant is applied."""
    ordered = sorted(steps, key=lambda step: step[0])
    times = [t for t, _ in ordered]
    depths = list(accumulate(change for _, change in ordered))

    def depth(at: int) -> int:
        index = bisect_right(times, at)
        return depths[index - 1] if index else 0

    return depth


def below_slots_text(found: dict[str, Any]) -> str:
    """`worker w1 ran at most 1 job at once though --slots is 16: ...`, from a kept finding."""
    worker, slots = found["worker"], found["slots"]
    ran, asked = found["ran_at_most"], found["asked_at_most"]
    concurrency = max(ran, asked)
    jobs = "job" if ran == 1 else "jobs"
    return (
        f"worker {worker} ran at most {ran} {jobs} at once though --slots is {slots}: it asked "
        f"for at most {asked} a take while jobs waited, so its handler's concurrency_modifier "
        f"(or the worker's own setting) is {concurrency}; give --slots {concurrency} or raise "
        "its concurrency"
    )
