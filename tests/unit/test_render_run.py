"""The terminal tables of `jobbench run` at a fixed width, against golden files.

The result documents are built the way a run builds them: hand-made event logs measured by
core/run/queue_figures.py's measure_rep and added rep by rep to its scenario_entry with
core/run/loop.py's add_rep, so every figure in the tables is a real computation. Regenerate after an
intended change:
    JOBBENCH_UPDATE_GOLDEN=1 pytest tests/unit/test_render_run.py
"""

from __future__ import annotations

import heapq
import io
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from fake_queue.queue.latency import Distribution, LatencyModel
from jobbench.clients.live_records import BurstRecord
from jobbench.core.real_workers.fake_target import note_rep_end
from jobbench.core.real_workers.rep_drive import RepEnd
from jobbench.core.run.loop import add_rep, mark_failed
from jobbench.core.run.queue_figures import measure_rep, scenario_entry
from jobbench.core.scenario.config import Scenario
from jobbench.core.sim.predict import predict
from jobbench.measure import metrics
from jobbench.measure.analytic import expected_time_s
from jobbench.measure.figures import PHASES, PhaseSamples, RepMeasure
from jobbench.measure.live_metrics import live_rep_measure
from jobbench.render.page import html_tables
from jobbench.render.text.terminal import render_result, scenario_footer, scenario_table
from jobbench.render.words.cells import fmt
from jobbench.render.words.explain import (
    FAKE_LEGEND,
    IDEAL_LEGEND,
    LIVE_LEGEND,
    gap_line,
    scenario_title,
)
from jobbench.render.words.summary import ROWS
from jobbench.results.model import Environment, Result, ScenarioResult, TargetBlock
from jobbench.results.store import new_document
from jobbench.workers.spec import WorkerSpec
from tests.unit.test_live_metrics import record
from tests.unit.test_render_compare import check_golden

NS = 1_000_000_000
T0 = 1_000 * NS
TAKE_S, WAKE_S = 0.05, 0.005
LATENCY = LatencyModel(take=Distribution("fixed", TAKE_S), wake=Distribution("fixed", WAKE_S))
DRAIN = Scenario(
    "2w-8j-0.5s", workers=2, slots=2, burst=8, job_seconds=0.5,
    worker=WorkerSpec("model", "drain"), latency=LATENCY,
)  # fmt: skip
WIDE = Scenario(
    "1w-6j-0.2s", workers=1, slots=4, burst=6, job_seconds=0.2,
    worker=WorkerSpec("model", "drain"), latency=LATENCY,
)  # fmt: skip


def drain_rep(
    s: Scenario, rep: int, stall_s: float = 0.0, failed: frozenset[int] = frozenset()
) -> list[dict[str, Any]]:
    """The drain policy by hand, in server ns: each worker's first take waits and is woken by
    the burst, each later one arrives when its batch is done and is answered a take latency
    later. Job i of rep r runs job_seconds + (r * 3 + i) ms; `stall_s` holds worker 0's second
    take (a rep that stalled); jobs in `failed` end FAILED."""
    events: list[dict[str, Any]] = [
        {"t": T0, "ev": "submit", "job": f"job-{i}"} for i in range(s.burst)
    ]
    ready = [(T0 - NS, w, "woken", 0) for w in range(s.workers)]  # arrived, worker, kind, takes
    heapq.heapify(ready)
    next_job, take_id = 0, 0
    while next_job < s.burst:
        arrived, w, kind, taken = heapq.heappop(ready)
        worker = f"w{w}"
        claim = T0 if kind == "woken" else arrived
        answer = claim + int((WAKE_S if kind == "woken" else TAKE_S) * NS)
        if w == 0 and taken == 1:
            answer += int(stall_s * NS)
        take_id += 1
        batch = range(next_job, min(s.burst, next_job + s.slots))
        next_job = batch.stop
        keys = {"take": take_id, "worker": worker}
        events += [{"t": claim, "ev": "claim", "job": f"job-{i}", **keys} for i in batch]
        events += [{"t": answer, "ev": "deliver", "job": f"job-{i}", **keys} for i in batch]
        events.append(
            {"t": answer, "ev": "take", "asked": s.slots, "got": len(batch), "arrived": arrived}
            | {"due": answer, "kind": kind, "in_progress": False, **keys}
        )
        ends = [answer + int(s.job_seconds * NS) + (rep * 3 + i) * 1_000_000 for i in batch]
        events += [
            {"t": t, "ev": "done", "job": f"job-{i}", "worker": worker}
            | {"status": "FAILED" if i in failed else "COMPLETED"}
            for i, t in zip(batch, ends)
        ]
        heapq.heappush(ready, (max(ends), w, "queued", taken + 1))
    return sorted(events, key=lambda e: int(e["t"]))


def rep_of(s: Scenario, log: list[dict[str, Any]]) -> RepMeasure:
    """One event log measured as a run measures it, workers named w0, w1..."""
    return measure_rep(s, log, [f"w{w}" for w in range(s.workers)])


def measured(s: Scenario, logs: list[list[dict[str, Any]]]) -> ScenarioResult:
    """A scenario entry with one rep per event log, as a run adds them."""
    entry = scenario_entry(s, None)
    samples: list[PhaseSamples] = []
    for log in logs:
        add_rep(entry, rep_of(s, log), samples)
    return entry


# results.store.environment() asks git for the sha: a process, which unit tests never start
ENV = Environment(python="3.11.7", platform="Linux", cpus=2, runpod=None, git_sha=None)
EMBEDDED = TargetBlock(kind="fake", endpoint="embedded")


def complete_run() -> Result:
    """Two scenarios: five drain reps of which the fifth stalled 1 s, and three reps of a
    one-worker row with a failed job in each."""
    doc = new_document("main", EMBEDDED, ENV)
    stalled = [drain_rep(DRAIN, r, stall_s=1.0 if r == 5 else 0.0) for r in range(1, 6)]
    doc.scenarios.append(measured(DRAIN, stalled))
    doc.scenarios[0].predicted = predict(DRAIN, seed=None)  # as a fake-queue session adds it
    doc.scenarios.append(
        measured(WIDE, [drain_rep(WIDE, r, failed=frozenset({r})) for r in range(1, 4)])
    )
    doc.complete = True
    return doc


def interrupted_run() -> Result:
    """Two reps of the first scenario ran, then Ctrl-C: marked as run_plans marks it."""
    doc = new_document("main", EMBEDDED, ENV)
    doc.scenarios.append(measured(DRAIN, [drain_rep(DRAIN, r) for r in (1, 2)]))
    mark_failed([doc], "interrupted (Ctrl-C) before every rep ran", interrupted=True)
    return doc


def printed(*renderables: Any) -> str:
    console = Console(file=io.StringIO(), width=100)
    for renderable in renderables:
        console.print(renderable)
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


def rendered(doc: Result, saved_to: str | None = "reports/main.json") -> str:
    console = Console(file=io.StringIO(), width=100)
    render_result(doc, console, saved_to=saved_to)
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split("[│┃]", line)]


def test_a_complete_run_renders_as_its_golden_file() -> None:
    check_golden("run_table.txt", rendered(complete_run()))


def test_an_interrupted_run_renders_as_its_golden_file() -> None:
    check_golden("run_incomplete.txt", rendered(interrupted_run(), saved_to=None))


def test_the_run_tables_fit_100_columns() -> None:
    for doc in (complete_run(), interrupted_run()):
        text = rendered(doc)
        assert max(len(line.rstrip()) for line in text.splitlines()) <= 100


def test_each_row_is_the_median_min_and_max_of_the_reps() -> None:
    entry = complete_run().scenarios[0]
    text = printed(scenario_table(entry))
    lines = text.splitlines()
    assert cells(lines[0]) == ["metric", "median", "min", "max"]
    p99s = sorted(rep.time_to_p99_s or 0 for rep in entry.reps)
    row = next(cells(line) for line in lines if line.startswith("time to 99 %"))
    assert row == ["time to 99 %", *(fmt(v, "s") for v in (p99s[2], p99s[0], p99s[-1]))]
    counts = sorted(rep.takes.count or 0 for rep in entry.reps)
    row = next(cells(line) for line in lines if line.startswith("takes"))
    assert row == ["takes", *(str(n) for n in (counts[2], counts[0], counts[-1]))]
    per_job = sorted(rep.requests.per_job or 0 for rep in entry.reps if rep.requests)
    row = next(cells(line) for line in lines if line.startswith("requests per job"))
    assert len(per_job) == len(entry.reps) and per_job[0] > 1  # a job-done a job, and takes
    assert row[1:] == [fmt(v, "ratio") for v in (per_job[2], per_job[0], per_job[-1])]
    # rows in the documented order, one per figure the summary has
    titles = [cells(line)[0] for line in lines[2:]]
    assert titles[:3] == ["time to 50 %", "time to 99 %", "time to 100 %"]
    assert titles[-1] == "efficiency" and len(titles) == 14


def test_a_figure_no_rep_has_is_left_out_of_the_table() -> None:
    entry = complete_run().scenarios[0]
    entry.summary["service_p99_s"] = None
    text = printed(scenario_table(entry))
    assert "take to done p50" in text and "take to done p99" not in text


def test_the_page_and_the_terminal_show_one_summary_table_the_terminal_fewer_rows() -> None:
    """One list of rows (render/words/summary.py): the terminal's are the page's in the same
    order, and it leaves out only the rows marked for the page."""
    for entry in complete_run().scenarios:
        text = printed(scenario_table(entry))
        terminal = [cells(line)[0] for line in text.splitlines()[2:]]
        page = re.findall(r"<tr[^>]*><td>([^<]*)</td>", html_tables.summary_table([entry], [""]))
        assert terminal == [title for title in page if title in terminal]
        left_out = set(page) - set(terminal)
        assert left_out == {row.titled(False) for row in ROWS if not row.terminal}
    keys = metrics.summarise_reps([{"phases": dict.fromkeys(PHASES)}]).keys()
    assert {row.key for row in ROWS} <= keys  # every row a figure the summary holds


def test_the_footer_names_the_ideal_the_outlier_reps_and_the_split() -> None:
    stalled, steady = complete_run().scenarios
    footer = printed(scenario_footer(stalled)).splitlines()
    efficiency = stalled.summary["efficiency"]
    assert efficiency is not None and stalled.ideal_s is not None
    assert footer[0].startswith(f"ideal {stalled.ideal_s:.3f} s = ")
    assert footer[1].startswith(f"efficiency {efficiency.median:.1%} = ideal / time to 99 %")
    # the stalled fifth rep is an outlier of time to 99 % (marked by metrics.outlier_reps)
    assert stalled.outliers is not None and stalled.outliers["time_to_p99_s"] == [5]
    assert "outlier reps in time_to_p99_s: 5 (a gate sets them aside)" in footer
    split = stalled.reps[-1].split.jobs_per_worker
    assert footer[-1] == "split (last rep): " + ", ".join(f"{w} {n}" for w, n in split.items())
    # three steady reps: no outlier line; a failed job counts for the worker that ran it
    text = printed(scenario_footer(steady))
    assert "outlier" not in text and f"split (last rep): w0 {WIDE.burst}" in text


def test_an_interrupted_run_says_so_after_its_tables_and_a_complete_one_does_not() -> None:
    text = rendered(interrupted_run(), saved_to=None)
    assert text.rstrip().splitlines()[-1] == (
        "incomplete: interrupted (Ctrl-C) before every rep ran"
    )
    assert text.index("2w-8j-0.5s") < text.index("incomplete:")
    assert "saved" not in text
    done = rendered(complete_run())
    assert "incomplete" not in done and done.rstrip().endswith("saved reports/main.json")


def faulted_run() -> Result:
    """Three drain reps under faults: rep 1 lost two jobs to dropped job-dones, rep 2 had a
    worker stall and come back, rep 3 is clean: as the fake target notes a rep's end."""
    s = replace(DRAIN, faults=("job-done:drop:0.05",))
    doc = new_document("main", EMBEDDED, ENV)
    entry = scenario_entry(s, None)
    entry.params.faults = list(s.faults)
    stall = {"kind": "stall", "worker": "w0", "at_s": 0.5, "for_s": 7.25, "held": 3}
    ends = [
        RepEnd(lost=["job-3", "job-7"]),
        RepEnd(anomalies=[{**stall, "resumed": True}]),
        RepEnd(),
    ]
    samples: list[PhaseSamples] = []
    for r, ended in enumerate(ends, start=1):
        measure = rep_of(s, drain_rep(s, r))
        if ended.lost:
            measure.figures["faults"] = {"job-done:drop": 2}
        note_rep_end(measure.figures, ended)
        add_rep(entry, measure, samples)
    doc.scenarios.append(entry)
    doc.complete = True
    return doc


def test_faults_losses_and_stalls_are_shown_per_rep_and_flagged_reps_set_aside() -> None:
    doc = faulted_run()
    out = rendered(doc)
    assert "faults and losses" in out
    rows = [cells(line) for line in out.splitlines() if line.split("│")[0].strip() in "123"]
    rows = [row for row in rows if len(row) == 8]
    assert [row[:7] for row in rows] == [
        ["1", "job-done:drop 2", "0", "2", "0", "0", "0"],
        ["2", "none", "0", "0", "0", "0", "1"],
        ["3", "none", "0", "0", "0", "0", "0"],
    ]
    assert (
        "rep 2: worker w0 stalled 7.250 s from 0.500 s holding 3 jobs (the worker's own: counted)"
        in out
    )
    assert "rep 1 lost 2 jobs: job-3, job-7" in out
    entry = doc.scenarios[0]
    p99 = entry.summary["time_to_p99_s"]
    assert p99 is not None
    kept = [entry.reps[0].time_to_p99_s, entry.reps[2].time_to_p99_s]  # not rep 2's
    assert p99.min == min(v for v in kept if v is not None)
    html = html_tables.resilience_table(entry)
    assert "<caption>faults and losses</caption>" in html and "job-done:drop 2" in html
    assert "never came back" not in html and "stalled 7.250 s" in html


def test_an_undisturbed_scenario_has_no_faults_table_but_failed_jobs_make_one() -> None:
    doc = complete_run()
    assert rendered(doc).count("faults and losses") == 1  # the scenario whose jobs failed
    assert html_tables.resilience_table(doc.scenarios[0]) == ""
    page = html_tables.resilience_table(doc.scenarios[1])
    assert "jobs: 3 of 18 jobs failed (16.7%) over 3 reps" in page


def test_the_title_names_the_worker_its_policy_take_ahead_and_slots() -> None:
    """Two runs of one scenario name, drain and take-ahead, tell themselves apart."""
    take_ahead = replace(DRAIN, worker=WorkerSpec("model", "take-ahead", take_ahead=4))
    drain_entry, ahead_entry = (measured(s, [drain_rep(s, 1)]) for s in (DRAIN, take_ahead))
    assert drain_entry.name == ahead_entry.name == "2w-8j-0.5s"
    assert scenario_title(drain_entry) == (
        "2w-8j-0.5s · model worker, policy drain, no take-ahead · 2 x 2 slots"
    )
    assert scenario_title(ahead_entry) == (
        "2w-8j-0.5s · model worker, policy take-ahead, take-ahead 4 · 2 x 2 slots"
    )
    sdk = replace(DRAIN, worker=WorkerSpec("runpod", take_ahead=32))
    runpod = scenario_entry(sdk, {"version": "1.12.0", "path": "/x/runpod", "take_ahead": True})
    assert scenario_title(runpod) == (
        "2w-8j-0.5s · runpod SDK 1.12.0 worker, take-ahead 32 · 2 x 2 slots"
    )
    # a checkout has no installed version: the title names it as the worker does, a git ref so
    checkout = WorkerSpec("runpod", sdk_path=Path("/c/runpod"), sdk_name="git ref v1.10.0 (79f6c)")
    ref = scenario_entry(
        replace(DRAIN, worker=checkout), {"version": None, "path": "/c/runpod", "take_ahead": False}
    )
    assert scenario_title(ref) == (
        "2w-8j-0.5s · runpod SDK worker from git ref v1.10.0 (79f6c), no take-ahead · 2 x 2 slots"
    )
    command = replace(DRAIN, worker=WorkerSpec("command", command="python h.py"), slots=1)
    assert scenario_title(scenario_entry(command, None)) == (
        "2w-8j-0.5s · command 'python h.py' · 2 x 1 slot"
    )
    # the title heads each table, on its own line: a long command is not folded into a column
    text = rendered(complete_run())
    lines = text.splitlines()
    for entry in complete_run().scenarios:
        title = scenario_title(entry)
        assert cells(lines[lines.index(title) + 1]) == ["metric", "median", "min", "max"]


def test_the_ideal_is_stated_with_its_formula_and_the_scenarios_numbers() -> None:
    entry = complete_run().scenarios[0]
    line = printed(scenario_footer(entry)).splitlines()[0]
    formula, numbers = line.split(" = ")[1:]
    assert formula == "wake + ceil(burst / (workers x slots)) x job"
    assert numbers == "0.005 + ceil(8 / (2 x 2)) x 0.5"
    assert entry.ideal_s == metrics.ideal_time(8, 2, 2, 0.5, WAKE_S) == WAKE_S + 2 * 0.5


def test_the_efficiency_is_read_against_what_the_model_expects_of_each_policy() -> None:
    entry = complete_run().scenarios[0]
    text = " ".join(printed(scenario_footer(entry)).split())
    assert entry.ideal_s is not None
    for policy in ("drain", "take-ahead", "sdk-1.12"):
        time = expected_time_s(
            policy, burst=8, workers=2, slots=2, job_seconds=0.5, take_s=TAKE_S, wake_s=WAKE_S
        )
        mine = " (this worker's policy)" if policy == "drain" else ""
        assert f"{policy} {fmt(entry.ideal_s / time, '%')}{mine}" in text
    # the drain model's figure is what this drain run got, within the harness's few percent
    measured_eff = entry.summary["efficiency"]
    assert measured_eff is not None
    drain = expected_time_s(
        "drain", burst=8, workers=2, slots=2, job_seconds=0.5, take_s=TAKE_S, wake_s=WAKE_S
    )
    assert abs(measured_eff.median - entry.ideal_s / drain) < 0.05


@pytest.mark.parametrize(
    ("worker", "latency", "said"),
    [
        (WorkerSpec("model", "sdk-take-ahead", take_ahead=2), LATENCY, "sdk-take-ahead {eff}"),
        (WorkerSpec("model", "job-cache"), LATENCY, "none for job-cache, this worker's policy"),
        (
            WorkerSpec("model", "drain"),
            replace(LATENCY, take_extra=4),
            "no figure for a take handed up to 4 jobs more than it asked (take_extra)",
        ),
    ],
    ids=["sdk-take-ahead", "job-cache", "take-extra"],
)
def test_the_efficiency_line_names_the_workers_own_fix_or_why_the_model_has_no_figure(
    worker: WorkerSpec, latency: LatencyModel, said: str
) -> None:
    """The SDK's take-ahead buffers as the ideal does (take-ahead's cycle); the job cache's take
    sizes race its tick; a server handing out more than asked breaks every figure's premise."""
    s = replace(DRAIN, worker=worker, latency=latency)
    entry = measured(s, [drain_rep(s, 1)])
    text = " ".join(printed(scenario_footer(entry)).split())
    assert entry.ideal_s is not None
    take_ahead = expected_time_s(
        "take-ahead", burst=8, workers=2, slots=2, job_seconds=0.5, take_s=TAKE_S, wake_s=WAKE_S
    )
    eff = fmt(entry.ideal_s / take_ahead, "%")
    assert said.format(eff=eff) in text
    mine = "(this worker's policy)"
    assert (mine in text) == (worker.policy == "sdk-take-ahead")
    assert ("the latency model expects" in text) == (not latency.take_extra)


def legend_of(text: str) -> str:
    """The legend: the lines after the last table's blank line, up to the `saved` line."""
    block = text.rstrip().split("\n\n")[-2]
    return " ".join(block.split())


def test_one_legend_under_the_tables_defines_every_figure_they_show() -> None:
    text = rendered(complete_run())
    legend = legend_of(text)
    assert legend == " ".join(" ".join((*FAKE_LEGEND, IDEAL_LEGEND)).split())
    assert text.count(FAKE_LEGEND[0].split(";")[0]) == 1  # once, not per scenario
    assert text.index("1w-6j-0.2s") < text.index("time to X %:") < text.index("saved")
    for term in (
        "time to X %:", "throughput:", "median / min / max:", "queue wait:", "take to done:",
        "end-to-end:", "takes:", "mean take size:", "split:", "ideal:", "efficiency",
    ):  # fmt: skip
        assert term in legend, term
    assert "service" not in text  # fake mode's claim -> done is not the platform's service
    assert "docs/workers.md" in legend  # what the ideal assumes of a worker


def live_run() -> Result:
    """Two live reps of the same client-side records, as LiveSession.entry starts them."""
    doc = new_document(
        "live", TargetBlock(kind="live", endpoint="http://127.0.0.1:8000/v2/ep"), ENV
    )
    entry = ScenarioResult.model_validate(
        {
            "name": "live-10j-1s",
            "params": {"workers": None, "slots": None, "burst": 10, "job_seconds": 1.0}
            | {"take_ahead": None, "worker": "live", "policy": None, "latency": None}
            | {"submit_rate": "100/s", "inputs": None},
            "ideal_s": None,
            "worker": "live endpoint",
            "sdk": None,
            "reps": [],
            "summary": {},
        }
    )
    samples: list[PhaseSamples] = []
    for _ in range(2):
        burst: BurstRecord = record()
        add_rep(entry, live_rep_measure(burst), samples)
    doc.scenarios.append(entry)
    doc.complete = True
    return doc


def test_a_live_run_renders_as_its_golden_file() -> None:
    check_golden("run_live.txt", rendered(live_run(), saved_to="reports/live.json"))


def test_live_tables_name_the_platforms_figures_for_what_they_are() -> None:
    doc = live_run()
    text = rendered(doc)
    assert text.splitlines()[0] == "live-10j-1s · live endpoint, submit rate 100/s"
    rows = {cells(line)[0]: cells(line)[1:] for line in text.splitlines() if "│" in line}
    assert rows["delayTime p50"][0] == "0.500 s"  # the platform's delayTime, as recorded
    assert rows["executionTime p50"][0] == "1.000 s"
    assert not {"take to done p50", "queue wait p50", "efficiency", "takes"} & set(rows)
    assert "ideal" not in text  # a client cannot know the fleet: no ideal, no efficiency
    assert legend_of(text.replace("\ntarget ", "\n\ntarget ")) == " ".join(
        " ".join(LIVE_LEGEND).split()
    )


def test_the_gap_to_the_ideal_splits_into_the_models_points_and_the_harness_points() -> None:
    """Efficiency + the latency model's points + the harness's points = 100: the bound is
    the simulated figure of the same scenario, the rest is what the real run added."""
    entry = complete_run().scenarios[0]
    line = gap_line(entry)
    assert line is not None
    actual, model, bound, harness = (float(x) for x in re.findall(r"(-?[\d.]+)(?:%| points)", line))
    assert actual + model + harness == pytest.approx(100, abs=0.15)
    assert entry.predicted is not None and entry.ideal_s is not None
    assert bound == pytest.approx(100 * entry.ideal_s / entry.predicted.time_to_p99_s, abs=0.05)
    assert "the harness" in line and "drain policy" in line
    assert gap_line(complete_run().scenarios[1]) is None  # nothing simulated for it
