"""The HTML report from generated results: the page's size for a 10,000-job run, a result
without its events file, and the series and primitives behind the plots. Pages of real runs
(one SVG per plot, nothing fetched, dark mode, both sides of a comparison) are in
tests/e2e/test_html_report.py."""

from __future__ import annotations

import heapq
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from jobbench.commands.report import ReportRequest, report_command
from jobbench.errors import ResultsError
from jobbench.measure import metrics, stats
from jobbench.measure.series import RepSeries, Span, rep_series
from jobbench.render import svg
from jobbench.render.charts import Plotted
from jobbench.render.lanes import count_over_time, slot_rows
from jobbench.render.timeline import timeline
from jobbench.results.events_file import EventsWriter
from jobbench.results.store import SCHEMA, write_json
from tests.unit.cli import run_cli

PLOTS = ("slot timeline", "completion", "queue depth", "take sizes", "take latencies", "CDF")


def svgs(page: str) -> list[str]:
    return re.findall(r"<svg\b.*?</svg>", page, flags=re.S)


def labels(page: str) -> list[str]:
    return re.findall(r'<svg [^>]*aria-label="([^"]*)"', page)


def test_without_events_the_tables_render_and_say_why(tmp_path: Path) -> None:
    result = write_synthetic(tmp_path, jobs=64, workers=2, slots=4)
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "x.json").write_text(result.read_text())  # no events file beside it
    report_command(ReportRequest(str(tmp_path / "alone" / "x.json"), tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text()
    assert "<svg" not in page and "time to 99 %" in page
    assert "plots need the events file" in page and "events on" in page
    report_command(ReportRequest(str(result), tmp_path / "with.html"))  # beside it: plotted
    assert len(svgs((tmp_path / "with.html").read_text())) == len(PLOTS)


def test_a_result_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = write_synthetic(tmp_path, jobs=64, workers=2, slots=4)
    reads: list[Path] = []
    read_text = Path.read_text

    def counted(self: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(self)
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)
    report_command(ReportRequest(str(result), tmp_path / "r.html"))
    assert reads.count(result) == 1


def test_cdf_marks_are_the_summarys_percentiles() -> None:
    series = RepSeries(e2e=[1.0, 2.0, 3.0, 4.0])
    assert series.p(50) == 2.5 and series.p(99) == pytest.approx(3.97)
    assert series.p(99) == stats.phase_stats(series.e2e)["p99"] and RepSeries().p(50) is None


def test_missing_or_corrupt_result_is_a_results_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ResultsError, match="jobbench run --label nope"):
        report_command(ReportRequest("nope", tmp_path / "r.html", tmp_path))
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ResultsError, match="not a readable JSON result"):
        report_command(ReportRequest(str(tmp_path / "bad.json"), tmp_path / "r.html"))
    assert run_cli(monkeypatch, "report", "nope", "--html", "r.html", cwd=tmp_path) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


# --- a 10,000-job run, generated: the page must stay small -----------------------------------

T0 = 1_000_000_000_000


def synthetic_rep(jobs: int, workers: int, slots: int, job_s: float, take_s: float) -> list[Any]:
    """The drain policy in ns: woken takes at burst start, then take + batch cycles."""
    ns = 1_000_000_000
    events: list[dict[str, Any]] = [{"t": T0, "ev": "submit", "job": f"j{i}"} for i in range(jobs)]
    ready = [(T0, w, T0 - ns, "woken") for w in range(workers)]  # (claim at, worker, ...)
    heapq.heapify(ready)
    next_job, take_id = 0, 0
    while next_job < jobs:
        claim, w, arrived, kind = heapq.heappop(ready)
        take_id += 1
        batch = range(next_job, min(jobs, next_job + slots))
        next_job = batch.stop
        answer = claim + int((0.05 if kind == "woken" else take_s) * ns)
        worker = f"w{w}"
        keys = {"take": take_id, "worker": worker}
        events += [{"t": claim, "ev": "claim", "job": f"j{i}", **keys} for i in batch]
        events += [{"t": answer, "ev": "deliver", "job": f"j{i}", **keys} for i in batch]
        events.append(
            {"t": answer, "ev": "take", "asked": slots, "got": len(batch), "arrived": arrived}
            | {"due": answer, "kind": kind, "in_progress": False, **keys}
        )
        done = [answer + int(job_s * ns) + (i * 7919) % 3_000_000 for i in batch]
        events += [
            {"t": t, "ev": "done", "job": f"j{i}", "status": "COMPLETED", "worker": worker}
            for i, t in zip(batch, done)
        ]
        heapq.heappush(ready, (max(done), w, max(done), "queued"))
    return sorted(events, key=lambda e: int(e["t"]))


def write_synthetic(folder: Path, jobs: int = 10_000, workers: int = 4, slots: int = 32) -> Path:
    name = f"{workers}w-{jobs}j-0.5s"
    entry: dict[str, Any] = {
        "name": name,
        "params": {"workers": workers, "slots": slots, "burst": jobs, "job_seconds": 0.5}
        | {"take_ahead": 0, "worker": "model", "policy": "drain"}
        | {"latency": {"take": 0.5, "wake": 0.05, "hold": 20.0, "done": 0.0}},
        "ideal_s": metrics.ideal_time(jobs, workers, slots, 0.5, 0.05),
        "worker": "model worker (drain)",
        "sdk": None,
        "reps": [],
    }
    writer = EventsWriter(folder / "big.events.jsonl")
    for rep in (1, 2):
        events = synthetic_rep(jobs, workers, slots, 0.5, 0.5)
        figures = metrics.rep_measure(
            events, workers=workers, slots=slots, burst=jobs, job_seconds=0.5, wake_latency_s=0.05
        ).figures
        entry["reps"].append(figures)
        writer.write_rep(name, rep, events)
    writer.close()
    entry["summary"] = metrics.summarise_reps(entry["reps"])
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    doc: dict[str, Any] = {"schema": SCHEMA, "label": "big", "created": created}
    env = {"python": "3.11.7", "platform": "Linux", "cpus": 4, "runpod": None, "git_sha": None}
    doc |= {"jobbench": "0.1.0", "environment": env}
    doc |= {"target": {"kind": "fake", "endpoint": "embedded"}}
    doc |= {"complete": True, "interrupted": False, "error": None, "scenarios": [entry]}
    return write_json(doc, folder / "big.json")


def test_a_10000_job_page_stays_small_and_says_what_it_thinned(tmp_path: Path) -> None:
    result = write_synthetic(tmp_path)
    report_command(ReportRequest(str(result), tmp_path / "big.html"))
    page = (tmp_path / "big.html").read_text()
    size = len(page.encode())
    print(f"10,000-job page: {size / 1e6:.2f} MB")
    assert size < 2_000_000
    assert len(svgs(page)) == len(PLOTS)
    assert "thinned" in page and "sampled at 2000 evenly spaced ranks" in page
    assert "4w-10000j-0.5s" in page and "rep 2 of 2" in page


# --- the series and primitives behind the plots ----------------------------------------------


def test_rep_series_turns_events_into_spans_takes_and_queue_depth() -> None:
    events = [
        {"t": 0, "ev": "submit", "job": "a"},
        {"t": 0, "ev": "submit", "job": "b"},
        {"t": 10, "ev": "claim", "job": "a", "take": 1, "worker": "w"},
        {"t": 500, "ev": "deliver", "job": "a", "take": 1, "worker": "w"},
        {"t": 500, "ev": "take", "take": 1, "worker": "w", "asked": 2, "got": 1}
        | {"arrived": -90, "kind": "woken"},
        {"t": 2500, "ev": "done", "job": "a", "status": "COMPLETED", "worker": "w"},
        {"t": 3000, "ev": "claim", "job": "b", "take": 2, "worker": "w"},
        {"t": 3600, "ev": "deliver", "job": "b", "take": 2, "worker": "w"},
    ]
    s = rep_series(events)
    assert s.submitted == 2 and s.done == [0.0025] and s.e2e == [0.0025]
    assert s.queue == [(0.0, 2), (1e-05, 1), (0.003, 0)]
    assert Span("w", 0.0005, 0.0025) in s.spans and Span("w", 0.0036, None) in s.spans
    (take,) = s.takes
    assert take.got == 1 and take.latency == pytest.approx(0.00059)


def test_slot_rows_hold_jobs_delivered_while_every_slot_is_busy() -> None:
    spans = [Span("w", 0.0, 1.0), Span("w", 0.0, 1.0), Span("w", 0.5, 2.0)]
    rows, held = slot_rows(spans, slots=2, end=3.0)
    assert rows == [[(0.0, 1.0), (1.0, 2.0)], [(0.0, 1.0)]]
    assert held == [(0.5, 1.0)]
    assert count_over_time([(0.0, 2.0), (1.0, 3.0), (2.0, 4.0)]) == [
        (0.0, 1),
        (1.0, 2),
        (2.0, 2),
        (3.0, 1),
        (4.0, 0),
    ]
    # more concurrency than slots and no room to wait: a row of its own, not a hold
    rows, held = slot_rows([Span("w", 0.0, 1.0), Span("w", 0.1, 0.9)], slots=1, end=1.0)
    assert len(rows) == 2 and held == []
    drawn = timeline(Plotted("a", "A", RepSeries(spans=spans)), 2, 2.0, "rep 1 of 1")
    assert "held, max 1" in drawn.svg and any("held:" in note for note in drawn.notes)


def test_thin_keeps_each_pixel_columns_extremes() -> None:
    points = [(x / 10, float(x % 7)) for x in range(1000)]
    thinned, cut = svg.thin(points)
    assert cut and len(thinned) <= 4 * 100
    assert points[0] in thinned and points[-1] in thinned
    assert {y for _, y in thinned} == {float(v) for v in range(7)}
    assert svg.ticks(0, 1.6) == [0.0, 0.5, 1.0, 1.5]
    assert svg.tick_text(0.25, 0.25) == "0.25" and svg.tick_text(2.0, 0.5) == "2.0"
