"""The HTML report from generated results: the page's size for a 10,000-job run, a result
without its events file, and the series and primitives behind the plots. Pages of real runs
(one SVG per plot, nothing fetched, dark mode, both sides of a comparison) are in
tests/e2e/test_html_report.py."""

from __future__ import annotations

import heapq
import os
import re
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

import pytest

from jobbench.commands.report import ReportRequest, report_command
from jobbench.core.real_workers.fake_target import note_rep_end
from jobbench.core.real_workers.rep_drive import RepEnd
from jobbench.core.run.loop import add_rep
from jobbench.errors import ResultsError
from jobbench.measure import metrics, stats
from jobbench.measure.figures import PhaseSamples
from jobbench.measure.series import RepSeries, Span, rep_series
from jobbench.procs.machine import (
    CpuTimes,
    MachineSample,
    busy_fraction,
    cpu_times,
    machine_load,
    sample,
)
from jobbench.render.page import charts, svg, thinning
from jobbench.render.page.charts import Ideal, Plotted
from jobbench.render.page.slot_rows import count_over_time, slot_rows
from jobbench.render.page.timeline import timeline
from jobbench.results.events_file import EventsWriter
from jobbench.results.model import Environment, ScenarioResult, TargetBlock
from jobbench.results.store import new_document, read_comparison, read_result, write_document
from tests.unit.cli import run_cli

PLOTS = ("slot timeline", "completion", "queue depth", "take sizes", "take latencies", "CDF")


def svgs(page: str) -> list[str]:
    return re.findall(r"<svg\b.*?</svg>", page, flags=re.S)


def labels(page: str) -> list[str]:
    return re.findall(r'<svg [^>]*aria-label="([^"]*)"', page)


def plotted(page: str) -> str:
    """The part of a one-scenario page that plots one rep in full (after every rep's block)."""
    found = re.search(r'<h3 id="[^"]*-plots">', page)
    assert found, "no plotted rep on the page"
    return page[found.start() :]


def rep_blocks(page: str) -> dict[int, str]:
    """Each rep's collapsed <details> block by rep number."""
    found = re.findall(r'<details id="[^"]*-rep-(\d+)">(.*?)</details>', page, flags=re.S)
    return {int(n): body for n, body in found}


def test_without_events_the_tables_render_and_say_why(tmp_path: Path) -> None:
    result = write_synthetic(tmp_path, jobs=64, workers=2, slots=4)
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "x.json").write_text(result.read_text())  # no events file beside it
    report_command(ReportRequest(str(tmp_path / "alone" / "x.json"), tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text()
    assert labels(page) == ["every rep: time to 99 % done, set-aside reps marked"]  # no events
    assert "time to 99 %" in page and "<details" not in page
    assert "plots need the events file" in page and "events on" in page
    report_command(ReportRequest(str(result), tmp_path / "with.html"))  # beside it: plotted
    page = (tmp_path / "with.html").read_text()
    assert len(svgs(plotted(page))) == len(PLOTS)
    assert ["slot timeline" in t for t in labels(rep_blocks(page)[1])] == [True, False]


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
        report_command(ReportRequest("nope", tmp_path / "r.html", out=tmp_path))
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


def write_synthetic(
    folder: Path,
    jobs: int = 10_000,
    workers: int = 4,
    slots: int = 32,
    *,
    label: str = "big",
    job_seconds: Sequence[float] = (0.5, 0.5),
    ends: Mapping[int, RepEnd] | None = None,
    error: str | None = None,
) -> Path:
    """A result as `jobbench run` saves it: a rep per `job_seconds` (generated events, measured,
    what the rep's end adds as `ends[rep]` says, added by the run loop's add_rep) and its events
    file; `error`: the run failed there (an incomplete result)."""
    name = f"{workers}w-{jobs}j-0.5s"
    entry = ScenarioResult.model_validate(
        {
            "name": name,
            "params": {"workers": workers, "slots": slots, "burst": jobs, "job_seconds": 0.5}
            | {"take_ahead": 0, "worker": "model", "policy": "drain"}
            | {"latency": {"take": 0.5, "wake": 0.05, "hold": 20.0, "done": 0.0}},
            "ideal_s": metrics.ideal_time(jobs, workers, slots, 0.5, 0.05),
            "worker": "model worker (drain)",
            "sdk": None,
            "reps": [],
            "summary": {},
        }
    )
    writer = EventsWriter(folder / f"{label}.events.jsonl")
    samples: list[PhaseSamples] = []
    for rep, job_s in enumerate(job_seconds, start=1):
        events = synthetic_rep(jobs, workers, slots, job_s, 0.5)
        measure = metrics.rep_measure(
            events, workers=workers, slots=slots, burst=jobs, job_seconds=0.5, wake_latency_s=0.05
        )
        note_rep_end(measure.figures, (ends or {}).get(rep, RepEnd()))
        add_rep(entry, measure, samples)
        writer.write_rep(name, rep, events)
    writer.close()
    env = Environment(python="3.11.7", platform="Linux", cpus=4, runpod=None, git_sha=None)
    doc = new_document(label, TargetBlock(kind="fake", endpoint="embedded"), env)
    doc.scenarios.append(entry)
    doc.complete, doc.error = error is None, error
    return write_document(doc, folder / f"{label}.json")


def test_a_10000_job_page_stays_small_and_says_what_it_thinned(tmp_path: Path) -> None:
    result = write_synthetic(tmp_path)
    report_command(ReportRequest(str(result), tmp_path / "big.html"))
    page = (tmp_path / "big.html").read_text()
    size = len(page.encode())
    print(f"10,000-job page: {size / 1e6:.2f} MB")
    assert size < 2_000_000
    assert len(svgs(plotted(page))) == len(PLOTS) and list(rep_blocks(page)) == [1]
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
    thinned, cut = thinning.thin(points)
    assert cut and len(thinned) <= 4 * 100
    assert points[0] in thinned and points[-1] in thinned
    assert {y for _, y in thinned} == {float(v) for v in range(7)}
    assert svg.ticks(0, 1.6) == [0.0, 0.5, 1.0, 1.5]
    assert svg.tick_text(0.25, 0.25) == "0.25" and svg.tick_text(2.0, 0.5) == "2.0"


# --- every rep, the strip of the gated metric, the verdicts, an incomplete result ------------

STALL = {"kind": "stall", "worker": "w1", "at_s": 0.4, "for_s": 2.5, "held": 4, "resumed": True}
SATURATED = {"kind": "saturated", "what": "the queue used 0.95 of a core", "fix": "--server"}
BUSY = machine_load(
    MachineSample(CpuTimes(100, 1000), 0.5), MachineSample(CpuTimes(400, 1600), 1.25)
)


def small(folder: Path, label: str, job_seconds: Sequence[float], **kw: Any) -> Path:
    return write_synthetic(folder, 64, 2, 4, label=label, job_seconds=job_seconds, **kw)


def page_of(result: Path, out: Path, rep: int | None = None) -> str:
    report_command(ReportRequest(str(result), out, rep=rep))
    return out.read_text()


def strip_svg(page: str) -> str:
    (found,) = [chunk for chunk in svgs(page) if 'aria-label="every rep:' in chunk]
    return found


def test_every_rep_has_its_plots_and_its_row(tmp_path: Path) -> None:
    result = small(tmp_path, "four", (0.5, 0.6, 0.55, 0.5))
    doc = read_result(result)
    page = page_of(result, tmp_path / "p.html")
    blocks = rep_blocks(page)
    assert list(blocks) == [1, 2, 3]  # rep 4 is the one plotted in full below
    for number, body in blocks.items():
        p99 = doc.scenarios[0].reps[number - 1].time_to_p99_s
        assert f"rep {number}: four: time to 99 % done {p99:.3f} s (counted)" in body
        found = labels(body)
        assert len(found) == 2 and "slot timeline" in found[0] and "completion" in found[1]
    assert 'href="#2w-64j-0-5s-rep-2">2</a>' in page and 'href="#2w-64j-0-5s-plots">4</a>' in page
    assert '<h3 id="2w-64j-0-5s-plots">' in page and "four: rep 4 of 4" in plotted(page)
    # --rep 2 plots rep 2 in full; rep 4 gets a block of its own
    page = page_of(result, tmp_path / "r2.html", rep=2)
    assert list(rep_blocks(page)) == [1, 3, 4] and "four: rep 2 of 4" in plotted(page)


def test_the_strip_marks_anomalous_partial_and_outlier_reps(tmp_path: Path) -> None:
    ends = {
        2: RepEnd(anomalies=[SATURATED]),
        3: RepEnd(partial="worker died"),
        4: RepEnd(anomalies=[STALL]),  # the worker's own: it counts
    }
    result = small(tmp_path, "odd", (0.5, 0.51, 0.49, 0.5, 0.9, 0.505), ends=ends)
    doc = read_result(result)
    assert doc.scenarios[0].outliers == {"time_to_p99_s": [5], "e2e_mean_s": [5]}
    page = page_of(result, tmp_path / "p.html")
    chart = strip_svg(page)
    for legend in ("counted (3)", "outlier (1)", "partial (1)", "anomalous (1)", "median of"):
        assert f">{legend}" in chart
    named = dict(re.findall(r'x="([\d.]+)"[^>]*class="lab small"[^>]*>(\d)</text>', chart))
    assert sorted(named.values()) == ["2", "3", "5"]  # the reps that do not count, by number
    x_of = {rep: float(x) for x, rep in named.items()}
    assert x_of["5"] > x_of["2"] and x_of["5"] > x_of["3"]  # the slow outlier on the right
    cross, _legend = re.findall(r'<path class="anom" d="M([\d.]+) [^"]*"', chart)
    assert float(cross) + 5 == pytest.approx(x_of["2"], abs=0.11)  # one cross, on rep 2
    rows = re.findall(r"<tr><td><a [^>]*>(\d)</a></td>(.*?)</tr>", page)
    flags = {int(n): re.findall(r"<td[^>]*>(.*?)</td>", cells)[1] for n, cells in rows}
    assert flags[1] == "counted" and flags[5] == "outlier"
    assert flags[2] == "anomalous: saturated"
    assert flags[3] == "partial: worker died"
    assert flags[4] == "the workers&#x27; own, counted: stall of w1 for 2.500 s from 0.400 s"
    assert "<b>anomalous</b>" not in page  # marks are explained once, under the strip
    assert "anomalous: something disturbed the measurement" in page


def test_the_machine_load_of_each_rep_is_kept_and_shown(tmp_path: Path) -> None:
    result = small(tmp_path, "busy", (0.5, 0.5), ends={1: RepEnd(machine=BUSY)})
    first, second = read_result(result).scenarios[0].reps
    assert first.machine is not None and first.machine.cpu_busy == 0.5
    assert (first.machine.load1_start, first.machine.load1_end) == (0.5, 1.25)
    assert second.machine is None  # recorded where it could be: an older result reads too
    page = page_of(result, tmp_path / "p.html")
    cpus = os.cpu_count()
    rows = re.findall(r"<tr><td><a [^>]*>(\d)</a></td>(.*?)</tr>", page)
    shown = [re.findall(r"<td[^>]*>(.*?)</td>", cells)[-1] for _, cells in rows]
    assert shown == [f"50% busy of {cpus} CPUs, load 0.50 \u2192 1.25", "-"]


def test_procs_machine_reads_proc_stat_and_the_load(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 5 50 800 40 2 3 0 7 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
    assert cpu_times(stat) == CpuTimes(busy=160, total=1000)  # guest is inside user already
    assert cpu_times(tmp_path / "missing") is None
    assert busy_fraction(CpuTimes(0, 0), CpuTimes(0, 0)) is None  # no tick between
    assert machine_load(MachineSample(None, None), MachineSample(None, None)) is None
    here = sample()
    if Path("/proc/stat").is_file():  # Linux, where jobbench runs its fake queue
        assert here.cpu is not None and here.load1 is not None


def test_a_comparison_page_has_one_line_per_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    a_reps, b_reps = (0.5, 0.51, 0.49, 0.5, 0.5, 0.505, 0.495), (0.8, 0.81, 0.79, 0.8, 0.8, 0.805)
    small(reports, "a", a_reps, ends={2: RepEnd(anomalies=[SATURATED])})
    small(reports, "b", b_reps)
    run_cli(monkeypatch, "compare", "a", "b", "--html", "ab.html", cwd=tmp_path)
    page = (tmp_path / "ab.html").read_text()
    comparison = read_comparison(reports / "a-vs-b.json")
    (row,) = comparison.rows
    assert row.verdict == comparison.verdict == "regression"  # B is slower
    verdicts = re.findall(r'<ul class="verdicts">(.*?)</ul>', page)[0]
    items = re.findall(r"<li [^>]*>(.*?)</li>", verdicts)
    assert len(items) == 2  # the row's, the overall one
    assert items[0] == f"<b>REGRESSION</b> {row.scenario}: {escape(row.reason)}"
    assert items[1].startswith("<b>REGRESSION</b> overall: slower in 2w-64j-0.5s; threshold")
    assert page.count(escape(row.reason)) == 1
    assert "A rep 2 (flagged: saturated)" in row.reason  # the gate set it aside, the strip too
    chart = strip_svg(page)
    assert ">anomalous (1)" in chart and ">counted (12)" in chart
    for caption in ("the gated metric", "other figures"):
        assert f"<caption>{caption}</caption>" in page


def test_an_incomplete_result_says_so_at_the_top(tmp_path: Path) -> None:
    error = "worker command 'nope' not found (exit 127)"
    result = small(tmp_path, "none", (), error=error)
    page = page_of(result, tmp_path / "p.html")
    banner = re.findall(r'<div class="banner" role="alert">(.*?)</div>', page)
    assert len(banner) == 1 and page.index('class="banner"') < page.index("<header>")
    assert escape(error) in banner[0] and "it holds no rep: nothing below was measured" in banner[0]
    assert "No rep of this scenario ran." in page and "<svg" not in page
    result = small(tmp_path, "one", (0.5,), error="interrupted (Ctrl-C or SIGTERM)")
    page = page_of(result, tmp_path / "q.html")
    assert "it holds 1 rep(s) (1 of 2w-64j-0.5s): the figures below are of those only" in page
    complete = page_of(small(tmp_path, "all", (0.5,)), tmp_path / "r.html")
    assert 'class="banner"' not in complete


def test_labels_stay_inside_their_picture() -> None:
    """The estimates the browser test checks for real: a label at the right edge ends there,
    a long legend wraps (and the plot moves down to make room)."""
    ideal = Ideal(ideal_s=16.05, job_s=0.5, per_wave=32, burst=1024)
    near = charts.completion([], ideal, x_max=16.05 * 1.03)
    assert re.search(r'text-anchor="end">ideal 16.050 s<', near.svg)
    far = charts.completion([], ideal, x_max=40.0)
    assert re.search(r'text-anchor="start">ideal 16.050 s<', far.svg)
    long = [Plotted(c, f"{c.upper()} = runpod-sdk-{'x' * 60}", RepSeries()) for c in "ab"]
    items = [(f"ln {p.cls}", p.label, "line") for p in long]
    assert svg.legend_rows(items, 64, 944) == 2
    wrapped = charts.queue_depth(long, 1.0).svg
    assert 'viewBox="0 0 960 235"' in wrapped  # 220 px and one more legend row
    for x, label in re.findall(
        r'<text x="([\d.]+)" y="[\d.]+" class="lab"[^>]*>([AB] =[^<]*)<', wrapped
    ):
        assert float(x) + svg.text_width(label) <= 960
    assert svg.fit("w-very-long-worker-name takes", 98, "lab small").endswith("\u2026")
