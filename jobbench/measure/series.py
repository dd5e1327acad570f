"""One rep's saved events (LABEL.events.jsonl: docs/events.md, times in us from burst start) ->
the plot series: busy spans per worker, takes, completions, queue depth, end-to-end latencies,
all in seconds from burst start.

Pure data from the same scan as the rep figures (events.py), so the completion curve reaches
99 % where time_to_p99_s says and the spans hold the jobs split.jobs_per_worker counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jobbench.measure.events import EventScan, scan_events
from jobbench.measure.stats import percentile

US_PER_S = 1e6


@dataclass(frozen=True)
class Span:
    """A job on a worker from `deliver` to `done` (end None: never finished in this rep)."""

    worker: str
    start: float
    end: float | None


@dataclass(frozen=True)
class Take:
    worker: str
    arrived: float
    answered: float
    asked: int
    got: int
    kind: str

    @property
    def latency(self) -> float:
        return self.answered - self.arrived


@dataclass(frozen=True)
class RepSeries:
    spans: list[Span] = field(default_factory=list)
    takes: list[Take] = field(default_factory=list)
    done: list[float] = field(default_factory=list)  # sorted times the completed jobs ended
    e2e: list[float] = field(default_factory=list)  # sorted, served jobs only
    queue: list[tuple[float, int]] = field(default_factory=list)  # (t, depth) after each change
    submitted: int = 0
    end: float = 0.0  # the last event time

    @property
    def workers(self) -> list[str]:
        return sorted({s.worker for s in self.spans} | {t.worker for t in self.takes})

    def p(self, pct: float) -> float | None:
        """Exact end-to-end percentile (linear interpolation), as the summary reports it."""
        return percentile(self.e2e, pct) if self.e2e else None


def _s(us: int) -> float:
    return us / US_PER_S


def rep_series(events: Iterable[Mapping[str, Any]]) -> RepSeries:
    return series_of(scan_events(events))


def series_of(s: EventScan) -> RepSeries:
    """The series of a scan whose times are us from burst start."""
    return RepSeries(
        spans=[Span(r.worker, _s(r.start), None if r.end is None else _s(r.end)) for r in s.runs],
        takes=[
            Take(tk.worker, _s(tk.arrived), _s(tk.t), tk.asked, tk.got, tk.kind) for tk in s.takes
        ],
        done=[_s(t) for t in s.completed_times()],
        e2e=sorted(_s(done - submit) for submit, _, done in s.completed()),
        queue=_depth(s.queue),
        submitted=len(s.submitted),
        end=_s(s.last),
    )


def _depth(deltas: Sequence[tuple[int, int]]) -> list[tuple[float, int]]:
    out: list[tuple[float, int]] = []
    depth = 0
    for t, change in sorted(deltas, key=lambda d: d[0]):
        depth += change
        if out and out[-1][0] == _s(t):
            out[-1] = (out[-1][0], depth)
        else:
            out.append((_s(t), depth))
    return out
