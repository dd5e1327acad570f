"""The simulator at scale (core/sim/engine.py, fake_queue/queue/event_log.py): the compact event log
gives back every event as appended and the same figures as the dicts, a rep reports its progress, a
big rep keeps no events for the file unless asked, and the collector is as it was after."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from fake_queue.queue.event_log import CompactEvents
from fake_queue.queue.latency import Distribution, LatencyModel
from jobbench.core.run.queue_figures import measure_rep
from jobbench.core.scenario.config import Scenario
from jobbench.core.scenario.worker import worker_spec
from jobbench.core.sim import engine as sim
from jobbench.core.sim import sim_target as sim_target
from jobbench.results import store
from tests.unit.cli import run_cli

LATENCY = LatencyModel(
    take=Distribution("fixed", 0.5),
    wake=Distribution("fixed", 0.05),
    hold=Distribution("fixed", 20.0),
    done=Distribution("fixed", 0.0),
)


def scenario(policy: str, workers: int = 2, burst: int = 300) -> Scenario:
    return Scenario(
        name=f"{policy}-scale",
        workers=workers,
        slots=8,
        burst=burst,
        job_seconds=0.5,
        worker=worker_spec("model", policy, 8 if policy == "take-ahead" else 0, None, None),
        latency=LATENCY,
    )


EVENTS: list[dict[str, Any]] = [
    {"t": 5, "ev": "submit", "job": "job-1"},
    {"t": 6, "ev": "claim", "job": "job-1", "take": 1, "worker": "w0"},
    {"t": 7, "ev": "done", "job": "job-1", "status": "COMPLETED", "worker": "w0"},
    {"t": 7, "ev": "done", "job": "job-2", "status": "CANCELLED", "worker": None, "reason": "x"},
    {"t": 8, "ev": "fault", "route": "take", "kind": "drop", "worker": "w1"},
    {"t": 8, "ev": "fault", "route": "done", "kind": "drop", "job": "job-1"},  # same length
    {"t": 9, "ev": "submit", "job": "job-3"},
]


def test_compact_events_give_back_every_event_as_appended_in_order() -> None:
    log = CompactEvents()
    for event in EVENTS:
        log.append(dict(event))
    assert len(log) == len(EVENTS)
    assert list(log) == EVENTS
    assert [list(e) for e in log] == [list(e) for e in EVENTS]  # key order kept too
    assert log[2:5] == EVENTS[2:5]
    assert log[::3] == EVENTS[::3]
    assert log[-1] == EVENTS[-1]
    assert log[10:] == []
    with pytest.raises(IndexError):
        log[len(EVENTS)]


def test_iterating_sees_events_appended_meanwhile() -> None:
    log = CompactEvents()
    log.append(dict(EVENTS[0]))
    seen = []
    for event in log:
        seen.append(event)
        if len(log) < 3:
            log.append(dict(EVENTS[len(log)]))
    assert seen == EVENTS[:3]


def test_a_head_is_the_log_as_it_was_by_row_and_by_column() -> None:
    log = CompactEvents()
    for event in EVENTS[:4]:
        log.append(dict(event))
    head = log.head()
    for event in EVENTS[4:]:
        log.append(dict(event))
    log.append({"t": 10, "ev": "done", "job": "job-3", "status": "COMPLETED", "worker": "w1"})
    assert len(head) == 4
    assert list(head) == EVENTS[:4]
    assert sorted(head.values_of("done", "job")) == ["job-1", "job-2"]  # not the later job-3
    assert sorted(log.values_of("done", "job")) == ["job-1", "job-2", "job-3"]
    assert sorted(log.values_of("submit", "job")) == ["job-1", "job-3"]
    assert list(log.values_of("fault", "route")) == ["take", "done"]


@pytest.mark.parametrize("policy", ["drain", "take-ahead", "sdk-1.12"])
def test_the_compact_log_gives_the_same_events_and_figures_as_the_dicts(
    monkeypatch: pytest.MonkeyPatch, policy: str
) -> None:
    s = scenario(policy)
    kept = sim.simulate_rep(s, seed=3)  # events kept: logged as dicts, in a plain list
    assert [e["ev"] for e in kept.events].count("done") == s.burst
    appended: list[dict[str, Any]] = []
    keep = CompactEvents.append

    def record(log: CompactEvents, event: dict[str, Any]) -> None:
        appended.append(dict(event))  # what the plain list held
        keep(log, event)

    monkeypatch.setattr(CompactEvents, "append", record)
    streamed = sim.simulate_rep(s, seed=3, keep_events=False)  # measured from the compact log
    assert appended[: len(kept.events)] == kept.events
    assert streamed.events == [] and streamed.measure.figures == kept.measure.figures
    from_dicts = measure_rep(s, kept.events, [f"{s.name}-w{i}" for i in range(s.workers)])
    assert from_dicts.figures == kept.measure.figures
    assert kept.measure.figures["jobs"]["completed"] == s.burst


def test_a_rep_reports_its_progress_up_to_every_job(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sim, "PROGRESS_EVERY_S", 0.0)  # tell at every look
    told: list[tuple[int, int]] = []
    s = scenario("drain", burst=100)
    sim.simulate_rep(s, seed=1, progress=lambda done, total: told.append((done, total)))
    assert told == [(64, 100), (100, 100)]  # a look every PROGRESS_LOOK_EVERY jobs, and the end
    monkeypatch.setattr(sim, "PROGRESS_LOOK_EVERY", 1)
    told.clear()
    sim.simulate_rep(s, seed=1, progress=lambda done, total: told.append((done, total)))
    assert [done for done, _ in told] == list(range(1, 101))


def test_a_rep_without_a_progress_callback_still_runs() -> None:
    outcome = sim.simulate_rep(scenario("take-ahead", burst=64), seed=1)
    assert outcome.measure.figures["jobs"]["completed"] == 64


def test_a_big_rep_keeps_no_events_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    s = scenario("take-ahead", burst=200)
    kept = sim.simulate_rep(s, seed=1)
    monkeypatch.setattr(sim, "EVENTS_MAX_JOBS", 199)
    big = sim.simulate_rep(s, seed=1)
    asked = sim.simulate_rep(s, seed=1, keep_events=True)
    assert len(kept.events) > 4 * 200 and big.events == [] and asked.events == kept.events
    assert big.measure.figures == kept.measure.figures
    assert sim.simulate_rep(scenario("drain", burst=10), seed=1, keep_events=False).events == []


def test_the_collector_is_as_it_was_after_a_rep() -> None:
    assert gc.isenabled()
    sim.simulate_rep(scenario("drain", burst=50), seed=1)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        sim.simulate_rep(scenario("drain", burst=50), seed=1)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_big_simulated_run_shows_progress_and_saves_no_events(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(store, "_git_sha", lambda: "0" * 40)  # unit tests start no process
    monkeypatch.setattr(store.platform, "platform", lambda: "Linux")
    monkeypatch.setattr(sim, "PROGRESS_EVERY_S", 0.0)
    monkeypatch.setattr(sim, "PROGRESS_LOOK_EVERY", 1)
    monkeypatch.setattr(sim, "EVENTS_MAX_JOBS", 300)  # "big" here: more than 300 jobs
    monkeypatch.setattr(sim_target, "EVENTS_MAX_JOBS", 300)
    flags = ("--worker", "model", "--policy", "drain", "-w", "2", "--job-seconds", "0.5", "-n", "1")
    assert run_cli(monkeypatch, "run", "--target", "sim", *flags, "-b", "400", cwd=tmp_path) == 0
    err = capsys.readouterr().err
    assert "400 jobs a rep: its events are not saved" in err
    assert "200/400 done" in err  # the plain progress lines, at the half
    events = (tmp_path / "reports" / "run.events.jsonl").read_text()
    assert '"ev":' not in events and '"ev": ' not in events
    doc = json.loads((tmp_path / "reports" / "run.json").read_text())
    assert doc["scenarios"][0]["reps"][0]["jobs"]["completed"] == 400
    assert run_cli(monkeypatch, "run", "--target", "sim", *flags, "-b", "300", cwd=tmp_path) == 0
    assert "not saved" not in capsys.readouterr().err
    assert '"ev"' in (tmp_path / "reports" / "run.events.jsonl").read_text()
