"""The one event scan (measure/events.py): the plot series and the rep figures of one log agree,
whichever unit the log is in (the server's ns, or the saved file's us from burst start)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from jobbench.measure.events import scan_events
from jobbench.measure.figures import TIME_TO
from jobbench.measure.metrics import rep_measure
from jobbench.measure.series import Span, rep_series
from jobbench.results.events_file import EventsWriter

T0 = 7_000_000_123  # burst start (ns), not a whole us: the saved file floors to us
PARAMS: dict[str, Any] = {"workers": 2, "slots": 2, "burst": 6, "job_seconds": 0.5,
                          "wake_latency_s": 0.05}  # fmt: skip


def ev(kind: str, at: float, **keys: Any) -> dict[str, Any]:
    return {"t": T0 + round(at * 1e9), "ev": kind, **keys}


def served(job: str, take: int, worker: str, at: float) -> list[dict[str, Any]]:
    return [ev(k, at, job=job, take=take, worker=worker) for k in ("claim", "deliver")]


def awkward_log() -> list[dict[str, Any]]:
    """Each rule the two consumers once wrote separately: a straggler delivered but never done,
    a requeued delivery, a FAILED job, one cancelled in the queue, takes before the burst."""
    return [
        *served("old", 9, "w1", -1.0),  # a straggler: not this rep's, never a span
        {"t": T0 - 500_000_000, "ev": "take", "take": 1, "worker": "w2", "asked": 2, "got": 0}
        | {"arrived": T0 - 900_000_000, "kind": "empty"},
        *(ev("submit", 0.0, job=f"j{i}") for i in range(1, 7)),
        *served("j1", 2, "w1", 0.010_000_7),
        *served("j2", 2, "w1", 0.010_000_7),
        ev("claim", 0.01, job="j3", take=3, worker="w2"),
        ev("deliver", 0.01, job="j3", take=3, worker="w2"),
        ev("requeue", 0.2, job="j3", take=3, worker="w2"),  # that answer never reached w2
        *served("j3", 4, "w1", 0.3),
        *served("j4", 5, "w2", 0.3),
        ev("done", 0.4, job="j6", status="CANCELLED", worker=None, reason="cancel"),
        ev("done", 0.500_000_9, job="j1", status="COMPLETED", worker="w1"),
        ev("done", 0.7, job="j2", status="FAILED", worker="w1"),
        *served("j5", 6, "w2", 0.8),
        ev("done", 0.9, job="j3", status="COMPLETED", worker="w1"),
        ev("done", 1.1, job="j4", status="COMPLETED", worker="w2"),
        ev("done", 1.300_000_4, job="j5", status="COMPLETED", worker="w2"),
    ]


def saved_rows(events: list[dict[str, Any]], tmp_path: Path) -> list[dict[str, Any]]:
    """The plotted path: EventsWriter's file (us from burst start), read back as report does."""
    path = tmp_path / "x.events.jsonl"
    writer = EventsWriter(path)
    writer.write_rep("s", 1, events)
    writer.close()
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_series_and_the_figures_of_one_log_agree(tmp_path: Path) -> None:
    events = awkward_log()
    measure = rep_measure(events, **PARAMS)
    figures, series = measure.figures, rep_series(saved_rows(events, tmp_path))
    n = figures["jobs"]["submitted"]
    assert series.submitted == n == 6
    assert len(series.done) == figures["jobs"]["completed"] == 4  # j2 failed, j6 cancelled
    for key, pct in TIME_TO:  # the completion curve reaches X % where the figure says
        rank = 1 if pct is None else -(-n * pct // 100)
        if rank <= len(series.done):  # the series is in whole us, the figure rounded to 1 us
            assert series.done[rank - 1] == pytest.approx(figures[key], abs=2e-6), key
        else:  # fewer jobs completed than X % of the burst: no time to X %
            assert figures[key] is None, key
    assert all(span.end is not None for span in series.spans)
    spans_per_worker = Counter(span.worker for span in series.spans)
    assert spans_per_worker == figures["split"]["jobs_per_worker"] == {"w1": 3, "w2": 2}
    assert series.e2e == pytest.approx(sorted(measure.samples.e2e), abs=1e-6)
    assert len([t for t in series.takes if t.answered >= 0]) == figures["takes"]["count"]


def test_the_scan_decides_alike_in_ns_and_in_saved_us(tmp_path: Path) -> None:
    events = awkward_log()
    ns, us = scan_events(events), scan_events(saved_rows(events, tmp_path))
    assert {j: f.status for j, f in ns.final.items()} == {j: f.status for j, f in us.final.items()}
    assert [(r.worker, r.end is None) for r in ns.runs] == [
        (r.worker, r.end is None) for r in us.runs
    ]
    assert [d for _, d in ns.queue] == [d for _, d in us.queue]


def test_a_failed_run_that_was_retried_is_a_closed_span_and_busy_time() -> None:
    events = [
        {"t": 0, "ev": "submit", "job": "a"},
        {"t": 0, "ev": "claim", "job": "a", "take": 1, "worker": "w"},
        {"t": 100, "ev": "deliver", "job": "a", "take": 1, "worker": "w"},
        {"t": 600, "ev": "done", "job": "a", "status": "FAILED", "worker": "w"},
        {"t": 700, "ev": "retry", "job": "a"},
    ]
    series = rep_series(events)
    assert series.spans == [Span("w", 0.0001, 0.0006)]  # not open to the end of the rep
    assert series.done == [] and series.queue[-1] == (0.0007, 1)
    assert scan_events(events).busy_spans() == {"w": [(100, 600)]}
