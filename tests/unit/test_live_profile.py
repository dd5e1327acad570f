"""Arrival profiles at a live endpoint: the open-loop /run schedule on virtual time (an endpoint
whose answers are slow, a tight /run window), and the figures of a profile's rep from
client-side records (latencies from the intended time, the `arrivals` and `steady` blocks)."""

from __future__ import annotations

import asyncio
import sys
import types
from collections import Counter
from typing import Any, cast

import pytest

from fake_queue.queue import virtual_clock
from jobbench.clients.endpoint import Endpoint
from jobbench.clients.live_burst import BurstPlan, LiveBurst
from jobbench.clients.live_http import Answer, LiveHttp
from jobbench.clients.live_records import BurstRecord, HealthSample, JobRecord
from jobbench.core.live.live_target import LiveTarget, due_times
from jobbench.core.scenario.config import Scenario, live_scenario_name
from jobbench.core.scenario.load import Wave
from jobbench.measure.arrival_pacing import LATE_S, pacing_figures
from jobbench.measure.live_metrics import (
    arrivals_block,
    claim_ns,
    live_events,
    live_rep_measure,
    served_times,
)
from jobbench.results.model import Rep

S = 1_000_000_000
T0 = 50 * S


# -- the open-loop schedule, on virtual time -------------------------------------------------
class SlowEndpoint:
    """RunPod's client API in this process: each /run answers `run_s` after it was sent, and
    every job is COMPLETED by its first /status."""

    def __init__(self, run_s: float) -> None:
        self.run_s = run_s
        self.runs: list[int] = []  # when each /run was sent, ns

    async def request(
        self, method: str, path: str, json: Any = None, timeout_s: float | None = None
    ) -> Answer:
        loop = asyncio.get_running_loop()
        sent = int(loop.time() * S)
        if path == "/run":
            self.runs.append(sent)
            await asyncio.sleep(self.run_s)
            body: Any = {"id": f"j{len(self.runs)}", "status": "IN_QUEUE"}
        elif path.startswith("/status/"):
            body = {"status": "COMPLETED", "delayTime": 10, "executionTime": 40}
        else:
            body = {"jobs": {"inQueue": 0, "inProgress": 0}, "workers": {"running": 1}}
        return Answer(200, body, sent, int(loop.time() * S))


def on_virtual_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The burst's modules read the running loop's clock: every timer is exactly on time."""

    def now() -> float:
        return asyncio.get_running_loop().time()

    clock = types.SimpleNamespace(monotonic=now, monotonic_ns=lambda: int(now() * S))
    for name in ("live_burst", "live_follow", "pacing"):
        monkeypatch.setattr(sys.modules[f"jobbench.clients.{name}"], "time", clock)


def run_profile(
    monkeypatch: pytest.MonkeyPatch, endpoint: SlowEndpoint, due_s: tuple[float, ...], **plan: Any
) -> BurstRecord:
    on_virtual_time(monkeypatch)
    values: dict[str, Any] = {"submit_rate": None, "timeout_s": 600, "due_s": due_s, **plan}
    burst_plan = BurstPlan(tuple({} for _ in due_s), **values)

    async def drive() -> BurstRecord:
        burst = LiveBurst(cast(LiveHttp, endpoint), burst_plan, lambda done, total: None)
        return await burst.run(asyncio.Event(), asyncio.Event())

    return virtual_clock.run(drive(), start_s=100.0)


def lateness_s(record: BurstRecord) -> list[float]:
    return [
        (job.first_sent_ns - job.intended_ns) / S
        for job in record.jobs
        if job.first_sent_ns is not None and job.intended_ns is not None
    ]


def test_each_run_goes_out_at_its_time_even_when_earlier_answers_are_slow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    due = tuple(i / 20 for i in range(20))  # rate:20/s:for:1s
    endpoint = SlowEndpoint(run_s=1.0)  # 20 /runs in flight at the peak: none waits for one
    record = run_profile(monkeypatch, endpoint, due)
    began = record.jobs[0].intended_ns
    assert began is not None
    assert [(job.intended_ns or 0) - began for job in record.jobs] == [round(d * S) for d in due]
    assert lateness_s(record) == pytest.approx([0.0] * 20, abs=1e-6)
    assert [t - began for t in endpoint.runs] == pytest.approx([d * S for d in due], abs=1e3)
    assert all(job.outcome == "accepted" and job.status == "COMPLETED" for job in record.jobs)


def test_a_profile_beyond_the_pacing_is_late_never_slowed_or_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    due = tuple(i / 16 for i in range(10))  # 16 a second against --submit-rate 8/s
    endpoint = SlowEndpoint(run_s=0.01)
    record = run_profile(monkeypatch, endpoint, due, submit_rate=8.0)
    assert Counter(job.outcome for job in record.jobs) == {"accepted": 10}
    began = record.jobs[0].intended_ns or 0
    # Each /run went out as soon as the pacing let it, and its intended time never moved:
    # the k-th is k/16 s late, so its latencies (from the intended time) hold that wait.
    assert [(t - began) / S for t in endpoint.runs] == pytest.approx([i / 8 for i in range(10)])
    assert lateness_s(record) == pytest.approx([i / 16 for i in range(10)], abs=1e-6)
    pacing = arrivals_block(record, "rate:16/s:for:0.625s")
    assert pacing["late_jobs"] == 9 and pacing["not_sent"] == 0
    assert pacing["submissions"] == pacing["requests"] == 10
    assert pacing["lateness_max_s"] == pytest.approx(9 / 16)


def test_a_burst_plans_due_times_must_cover_every_job() -> None:
    with pytest.raises(ValueError, match="2 due times for 3 jobs"):
        BurstPlan(({}, {}, {}), None, timeout_s=1, due_s=(0.0, 0.1))


# -- the target's words and plan --------------------------------------------------------------
def test_due_times_give_each_job_of_a_wave_its_time() -> None:
    assert due_times((Wave(0.0, 2), Wave(0.5, 1))) == (0.0, 0.0, 0.5)


def test_a_live_profile_is_named_and_described_for_its_profile() -> None:
    assert live_scenario_name(1024, 0.5) == "live-1024j-0.5s"
    assert live_scenario_name(40, 0.5, "rate:40/s:for:1s") == "live-rate-40-for-1s-0.5s"
    target = LiveTarget(Endpoint("http://127.0.0.1:9/v2/x"), None)
    burst = Scenario("b", burst=10)
    assert target.header([burst], 2) == (
        "live endpoint http://127.0.0.1:9/v2/x: 10 jobs x 2 reps, /run paced runpod"
    )
    profile = Scenario("p", load_spec="rate:40/s:for:1s")
    assert target.header([profile], 2) == (
        "live endpoint http://127.0.0.1:9/v2/x: rate:40/s:for:1s (40 jobs over 0.975 s) x 2 "
        "reps, each /run at its intended time (open loop) within /run pacing runpod"
    )


# -- a profile's figures -----------------------------------------------------------------------
def job(index: int, *, due: float, late: float, done: float, **fields: Any) -> JobRecord:
    """A COMPLETED profile job: due `due` s after T0, its /run sent `late` s after that
    (first and accepted), ended `done` s after T0; delayTime 0.1 s, executionTime 0.2 s."""
    values: dict[str, Any] = {
        "outcome": "accepted",
        "id": f"j{index}",
        "status": "COMPLETED",
        "intended_ns": T0 + round(due * S),
        "first_sent_ns": T0 + round((due + late) * S),
        "sent_ns": T0 + round((due + late) * S),
        "done_ns": T0 + round(done * S),
        "delay_ms": 100.0,
        "execution_ms": 200.0,
        "worker": "w0",
    }
    return JobRecord(index, {}, **(values | fields))


def profile_record() -> BurstRecord:
    """Ten jobs due 0.1 s apart; the sixth's /run went out 0.5 s late; one never sent."""
    jobs = [
        job(
            i, due=0.1 * i, late=0.5 if i == 5 else 0.0, done=0.1 * i + 0.3 + (0.5 if i == 5 else 0)
        )
        for i in range(10)
    ]
    jobs.append(JobRecord(10, {}, intended_ns=T0 + S))  # the rep ended before it was due
    health = [HealthSample(T0 + k * S // 2, k % 2, 1, 1, 0) for k in range(4)]
    return BurstRecord(jobs, health, Counter(run_requests=11))


def test_a_profiles_latencies_run_from_the_intended_time() -> None:
    rep = live_rep_measure(profile_record(), "rate:10/s:for:1.1s").figures
    assert rep["phases"]["e2e"]["max"] == pytest.approx(0.8)  # 0.5 s late + 0.3 s
    assert rep["phases"]["e2e"]["p50"] == pytest.approx(0.3)
    assert rep["phases"]["queue_wait"]["max"] == pytest.approx(0.1)  # the platform's delayTime
    assert rep["phases"]["service"]["max"] == pytest.approx(0.2)
    assert rep["time_to_first_s"] == pytest.approx(0.3)  # from the first intended submit
    assert rep["time_to_p100_s"] == pytest.approx(1.3)  # the late one
    assert rep["ideal_s"] is None and rep["efficiency"] is None
    Rep.model_validate(rep)  # the result document takes it as is


def test_a_burst_keeps_its_latencies_from_the_accepted_runs_send() -> None:
    rep = live_rep_measure(profile_record()).figures
    assert rep["phases"]["e2e"]["max"] == pytest.approx(0.3)
    assert rep["phases"]["queue_wait"]["max"] == pytest.approx(0.1)  # delayTime alone
    assert "arrivals" not in rep and "steady" not in rep


def test_a_profiles_rep_says_how_late_each_run_was() -> None:
    pacing = live_rep_measure(profile_record(), "rate:10/s:for:1.1s").figures["arrivals"]
    assert pacing == {
        "spec": "rate:10/s:for:1.1s",
        "submissions": 10,
        "requests": 11,
        "jobs": 11,
        "lateness_p50_s": 0.0,
        "lateness_p99_s": pytest.approx(0.455),
        "lateness_max_s": 0.5,
        "late_jobs": 1,
        "late_bound_s": LATE_S,
        "not_sent": 1,
    }


def test_a_profiles_steady_block_comes_from_client_side_times() -> None:
    steady = live_rep_measure(profile_record(), "rate:10/s:for:1.1s", warmup_s=0.2).figures[
        "steady"
    ]
    assert steady["warmup"] == "set" and steady["warmup_s"] == 0.2
    assert sum(w["arrivals"] for w in steady["windows"]) == 10  # accepted jobs only
    assert steady["e2e_p99_s"] is not None
    assert "efficiency" not in steady and "ideal_e2e_p99_s" not in steady  # no fleet of ours
    assert [w["queue_depth"] for w in steady["windows"]] == [0, 1]  # /health's inQueue
    # Its wait runs from the intended time to the claim: the late job's holds its lateness.
    assert steady["wait_p50_s"] == pytest.approx(0.1) and steady["wait_p99_s"] > 0.5
    assert "busy_slots" not in steady["windows"][0]


def test_the_claim_is_the_accepted_runs_send_plus_delay_time_else_done_less_execution() -> None:
    late = job(0, due=0.0, late=0.5, done=1.0)
    assert claim_ns(late) == T0 + round(0.6 * S)
    assert claim_ns(job(1, due=0.0, late=0.0, done=1.0, delay_ms=None)) == T0 + round(0.8 * S)
    unknown = job(2, due=0.0, late=0.0, done=1.0, delay_ms=None, execution_ms=None)
    assert claim_ns(unknown) is None
    failed = job(3, due=0.0, late=0.0, done=1.0, status="FAILED")
    cancelled = job(4, due=0.0, late=0.0, done=1.0, status="CANCELLED")
    # The completed jobs' latencies only: a failed job's would make a candidate look fast.
    assert served_times([late, unknown, failed, cancelled]) == [(T0, T0 + round(0.6 * S), T0 + S)]


def test_a_profiles_submit_events_carry_the_intended_time() -> None:
    submits = [e for e in live_events(profile_record()) if e["ev"] == "submit"]
    assert len(submits) == 10
    assert all(e["intended"] <= e["t"] for e in submits)
    assert {e["t"] - e["intended"] for e in submits} == {0, S // 2}


def test_pacing_figures_count_late_and_unsent_jobs_by_submission() -> None:
    figures = pacing_figures("bursts:3:every:1s:for:3s", [0.0, 0.003], [3, 3, 3], 2, 9)
    assert figures["submissions"] == 2 and figures["requests"] == 2
    assert figures["late_jobs"] == 3 and figures["not_sent"] == 3
    assert figures["lateness_max_s"] == 0.003 and figures["late_bound_s"] == LATE_S
    empty = pacing_figures("rate:1/s:for:1s", [], [1], 0, 1)
    assert empty["lateness_p50_s"] is None and empty["not_sent"] == 1
