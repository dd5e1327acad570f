"""rep_measure over hand-built event logs whose figures can be worked out on paper."""

from __future__ import annotations

from typing import Any

import pytest

from jobbench.measure.figures import times_to
from jobbench.measure.fleet_figures import FLEET_FIGURES
from jobbench.measure.metrics import (
    STEADY_FIGURES,
    ideal_time,
    pooled_phases,
    rep_measure,
    summarise_reps,
)

T0 = 5_000_000_000  # burst start (ns); non-zero so a figure using absolute `t` shows up wrong

Event = dict[str, Any]


def ev(kind: str, at: float, **keys: Any) -> Event:
    """An event `at` seconds after burst start."""
    return {"t": T0 + round(at * 1e9), "ev": kind, **keys}


def take(
    take_id: int, worker: str, asked: int, got: int, *, arrived: float, at: float, kind: str
) -> Event:
    """A take answered `at`, that came in at `arrived` (both seconds after burst start)."""
    event = ev("take", at, take=take_id, worker=worker, asked=asked, got=got, in_progress=False)
    return event | {"arrived": T0 + round(arrived * 1e9), "kind": kind}


def run(job: str, take_id: int, worker: str, claim: float, deliver: float) -> list[Event]:
    return [
        ev("claim", claim, job=job, take=take_id, worker=worker),
        ev("deliver", deliver, job=job, take=take_id, worker=worker),
    ]


def done(job: str, worker: str | None, at: float, status: str = "COMPLETED") -> Event:
    return ev("done", at, job=job, status=status, worker=worker)


PARAMS: dict[str, Any] = {"workers": 2, "slots": 2, "burst": 4, "job_seconds": 0.5,
                          "wake_latency_s": 0.05}  # fmt: skip


def four_jobs_two_workers() -> list[Event]:
    """w1's take was long-polling before the burst (woken), w2's arrives just after (queued)."""
    return [
        take(1, "w1", 2, 0, arrived=-0.6, at=-0.1, kind="empty"),  # before the burst: excluded
        *(ev("submit", 0.0, job=f"j{i}") for i in range(1, 5)),
        *run("j1", 2, "w1", 0.0, 0.05),
        *run("j2", 2, "w1", 0.0, 0.05),
        take(2, "w1", 2, 2, arrived=-0.2, at=0.05, kind="woken"),
        *run("j3", 3, "w2", 0.01, 0.51),
        *run("j4", 3, "w2", 0.01, 0.51),
        take(3, "w2", 2, 2, arrived=0.01, at=0.51, kind="queued"),
        done("j1", "w1", 0.55),
        done("j2", "w1", 0.65),
        done("j3", "w2", 1.01),
        take(4, "w1", 2, 0, arrived=1.0, at=1.5, kind="empty"),
        done("j4", "w2", 1.51, status="FAILED"),
    ]


def test_four_jobs_two_workers_by_hand() -> None:
    """j4 FAILED: times to X % and the phases count the three completed jobs only."""
    m = rep_measure(four_jobs_two_workers(), **PARAMS).figures
    assert m["time_to_first_s"] == pytest.approx(0.55)
    assert m["time_to_p50_s"] == pytest.approx(0.65)  # ceil(0.5 * 4) = 2nd completed job
    assert m["time_to_p99_s"] is None  # ceil(0.99 * 4) = 4 completed: only 3 did
    assert m["time_to_p100_s"] is None
    # the FAILED one is no output; measured up to the last completed job
    assert m["throughput_jps"] == pytest.approx(3 / 1.01, abs=1e-6)
    assert m["jobs"] == {"submitted": 4, "completed": 3, "failed": 1, "cancelled": 0,
                         "timed_out": 0, "unfinished": 0}  # fmt: skip
    phases = m["phases"]
    # queue waits of the completed jobs 0, 0, 0.01
    assert phases["queue_wait"] == pytest.approx({"p50": 0.0, "p90": 0.008, "p99": 0.0098,
                                                  "max": 0.01, "mean": 0.003333})  # fmt: skip
    # service = done - claim: 0.55, 0.65, 1.0 (the failed job's 1.5 is not a completed one)
    assert phases["service"] == pytest.approx({"p50": 0.65, "p90": 0.93, "p99": 0.993,
                                               "max": 1.0, "mean": 2.2 / 3})  # fmt: skip
    assert phases["e2e"]["p50"] == pytest.approx(0.65)
    assert phases["e2e"]["max"] == pytest.approx(1.01)
    assert phases["e2e"]["mean"] == pytest.approx(0.01 / 3 + 2.2 / 3)  # queue wait + service
    takes = m["takes"]
    assert (takes["count"], takes["empty"]) == (3, 1)
    assert takes["asked_mean"] == pytest.approx(2.0)
    assert takes["got_mean"] == pytest.approx(4 / 3, abs=1e-6)
    assert takes["full_fraction"] == pytest.approx(2 / 3, abs=1e-6)
    # latency = answered - arrived for takes that got jobs: 0.25 (woken) and 0.5 (queued)
    assert takes["latency"] == pytest.approx({"p50": 0.375, "p90": 0.475, "p99": 0.4975,
                                              "max": 0.5, "mean": 0.375})  # fmt: skip
    assert m["split"] == {"jobs_per_worker": {"w1": 2, "w2": 2}, "max_min_ratio": 1.0, "jain": 1.0}
    # busy = 0.5 + 0.6 + 0.5 + 1.0 slot-seconds over 2 workers * 2 slots * 1.51 s
    assert m["utilisation"] == pytest.approx(2.6 / (4 * 1.51), abs=1e-6)
    assert m["ideal_s"] == pytest.approx(0.55)
    assert m["efficiency"] is None  # ideal / time to 99 %, which this rep never reached
    assert "_samples" not in m


def test_worker_ids_include_idle_workers() -> None:
    m = rep_measure(four_jobs_two_workers(), **PARAMS, worker_ids=["w1", "w2", "w3"]).figures
    split = m["split"]
    assert split["jobs_per_worker"] == {"w1": 2, "w2": 2, "w3": 0}
    assert split["max_min_ratio"] is None  # one worker got nothing: no finite ratio
    assert split["jain"] == pytest.approx(16 / 24, abs=1e-6)


def timed_burst(n: int) -> list[Event]:
    """n jobs, job k (1-based) done at k * 10 ms, done events logged out of order."""
    events = [ev("submit", 0.0, job=f"j{k}") for k in range(1, n + 1)]
    events += [done(f"j{k}", "w1", k * 0.01) for k in reversed(range(1, n + 1))]
    return events


@pytest.mark.parametrize(
    ("n", "first", "p50", "p99", "p100"),
    [
        (1, 0.01, 0.01, 0.01, 0.01),
        (3, 0.01, 0.02, 0.03, 0.03),  # ceil(1.5) = 2
        (100, 0.01, 0.50, 0.99, 1.00),  # exactly 50 and 99 jobs: not one more
        (101, 0.01, 0.51, 1.00, 1.01),  # ceil(50.5) = 51, ceil(99.99) = 100
        (200, 0.01, 1.00, 1.98, 2.00),
    ],
)
def test_time_to_fraction_uses_ceil_of_q_times_n(
    n: int, first: float, p50: float, p99: float, p100: float
) -> None:
    m = rep_measure(timed_burst(n), **PARAMS).figures
    got = [m["time_to_first_s"], m["time_to_p50_s"], m["time_to_p99_s"], m["time_to_p100_s"]]
    assert got == pytest.approx([first, p50, p99, p100])


def test_incomplete_rep() -> None:
    events = four_jobs_two_workers()[:-1]  # j4 never finishes
    m = rep_measure(events, **PARAMS).figures
    assert m["time_to_p50_s"] == pytest.approx(0.65)
    assert m["time_to_p99_s"] is None
    assert m["time_to_p100_s"] is None
    assert m["efficiency"] is None
    assert m["jobs"]["unfinished"] == 1
    assert m["jobs"]["failed"] == 0
    # measured up to the last terminal job (j3 at 1.01 s)
    assert m["throughput_jps"] == pytest.approx(3 / 1.01, abs=1e-6)
    assert m["utilisation"] == pytest.approx(1.6 / (4 * 1.01), abs=1e-6)


def test_nothing_finished() -> None:
    events = [ev("submit", 0.0, job="j1"), *run("j1", 1, "w1", 0.0, 0.5)]
    m = rep_measure(events, **PARAMS).figures
    assert m["time_to_first_s"] is None
    assert m["throughput_jps"] is None
    assert m["utilisation"] is None
    assert m["phases"] == {"queue_wait": None, "service": None, "e2e": None}
    assert m["split"] == {"jobs_per_worker": {}, "max_min_ratio": None, "jain": None}
    assert m["takes"]["count"] == 0
    assert m["takes"]["latency"] is None


def test_no_jobs_submitted_reach_no_time() -> None:
    """A live burst with nothing accepted: n = 0 needs no terminal job, yet it reached nothing."""
    none = dict.fromkeys(("time_to_first_s", "time_to_p50_s", "time_to_p99_s", "time_to_p100_s"))
    assert times_to([], T0, 0) == none


def test_requeued_jobs_use_the_last_claim_and_deliver() -> None:
    events = [
        ev("submit", 0.0, job="j1"),
        ev("submit", 0.0, job="j2"),
        # j1: claimed by w1, whose client left before the answer: back to the queue
        ev("claim", 0.0, job="j1", take=1, worker="w1"),
        ev("requeue", 0.2, job="j1", take=1, worker="w1"),
        take(1, "w1", 1, 0, arrived=0.0, at=0.2, kind="gone"),
        *run("j1", 2, "w2", 0.3, 0.8),
        # j2: delivered to w1 but the answer could not be written: the old deliver must not count
        *run("j2", 3, "w1", 0.0, 0.05),
        ev("requeue", 0.06, job="j2", take=3, worker="w1"),
        *run("j2", 4, "w2", 0.1, 0.6),
        done("j2", "w2", 1.1),
        done("j1", "w2", 1.3),
    ]
    measure = rep_measure(events, **PARAMS)
    m, samples = measure.figures, measure.samples
    assert sorted(samples.queue_wait) == pytest.approx([0.1, 0.3])
    assert sorted(samples.service) == pytest.approx([1.0, 1.0])
    assert sorted(samples.e2e) == pytest.approx([1.1, 1.3])
    assert m["split"]["jobs_per_worker"] == {"w2": 2}
    assert m["utilisation"] == pytest.approx(1.0 / (4 * 1.3), abs=1e-6)  # 0.5 + 0.5 busy
    assert m["takes"]["count"] == 1
    assert m["takes"]["full_fraction"] == 0.0


def test_retried_job_counts_once_by_its_final_outcome() -> None:
    events = [
        ev("submit", 0.0, job="j1"),
        ev("submit", 0.0, job="j2"),
        *run("j1", 1, "w1", 0.0, 0.5),
        done("j1", "w1", 1.0, status="FAILED"),
        ev("retry", 1.2, job="j1"),
        *run("j1", 2, "w2", 1.2, 1.7),
        done("j1", "w2", 2.2),
        *run("j2", 1, "w1", 0.0, 0.5),
        done("j2", "w1", 1.5, status="FAILED"),
        ev("retry", 1.6, job="j2"),  # retried, never taken again: unfinished
    ]
    measure = rep_measure(events, **PARAMS)
    m = measure.figures
    assert m["jobs"] == {"submitted": 2, "completed": 1, "failed": 0, "cancelled": 0,
                         "timed_out": 0, "unfinished": 1,
                         "redelivered": 1}  # fmt: skip  # it ran twice: failed, then retried
    assert m["time_to_first_s"] == pytest.approx(2.2)
    assert m["time_to_p50_s"] == pytest.approx(2.2)
    assert m["time_to_p100_s"] is None
    assert measure.samples.queue_wait == pytest.approx([1.2])  # last claim - submit
    assert measure.samples.service == pytest.approx([1.0])
    assert m["split"]["jobs_per_worker"] == {"w2": 1}
    # every run held a slot: 0.5 (j1 failed) + 0.5 (j1 retried) + 1.0 (j2 failed)
    assert m["utilisation"] == pytest.approx(2.0 / (4 * 2.2), abs=1e-6)


def test_cancelled_and_timed_out_jobs_are_counted_but_never_done() -> None:
    events = [
        *(ev("submit", 0.0, job=f"j{i}") for i in range(1, 4)),
        *run("j1", 1, "w1", 0.0, 0.5),
        done("j1", "w1", 1.0),
        ev("done", 1.5, job="j2", status="CANCELLED", worker=None, reason="cancel"),
        *run("j3", 1, "w1", 0.0, 0.5),
        ev("stop", 2.5, job="j3", worker="w1"),
        ev("done", 2.5, job="j3", status="TIMED_OUT", worker="w1", reason="executionTimeout"),
        ev("ignored", 2.6, job="j3", worker="w1", status="TIMED_OUT"),
    ]
    m = rep_measure(events, **PARAMS).figures
    assert m["jobs"] == {"submitted": 3, "completed": 1, "failed": 0, "cancelled": 1,
                         "timed_out": 1, "unfinished": 0}  # fmt: skip
    # ceil(1.5) = 2 completed jobs: only one completed, so the drain never reached 50 %
    assert m["time_to_first_s"] == pytest.approx(1.0)
    assert m["time_to_p50_s"] is None and m["time_to_p100_s"] is None
    assert m["phases"]["e2e"]["max"] == pytest.approx(1.0)  # only the COMPLETED job
    assert m["split"]["jobs_per_worker"] == {"w1": 1}
    assert m["throughput_jps"] == pytest.approx(1 / 1.0)  # up to the last completed job
    assert "doubled" not in m["jobs"]  # a late answer for a TIMED_OUT job did not run it twice


def test_stragglers_from_an_earlier_burst_are_ignored() -> None:
    events = [
        done("old", "w1", -0.5),
        ev("submit", 0.0, job="j1"),
        *run("old", 9, "w1", -2.0, -1.5),
        done("old", "w1", 0.2),  # its submit is not in this log
        *run("j1", 1, "w1", 0.0, 0.5),
        done("j1", "w1", 1.0),
    ]
    m = rep_measure(events, **PARAMS).figures
    assert m["time_to_first_s"] == pytest.approx(1.0)
    assert m["jobs"]["completed"] == 1
    assert m["split"]["jobs_per_worker"] == {"w1": 1}


def test_burst_start_is_the_earliest_submit() -> None:
    events = [ev("submit", 0.0, job="j1"), ev("submit", 0.3, job="j2")]
    events += [*run("j1", 1, "w1", 0.0, 0.5), done("j1", "w1", 1.0)]
    events += [*run("j2", 2, "w1", 0.3, 0.8), done("j2", "w1", 1.2)]
    measure = rep_measure(events, **PARAMS)
    assert measure.figures["time_to_p100_s"] == pytest.approx(1.2)
    assert sorted(measure.samples.e2e) == pytest.approx([0.9, 1.0])  # per-job submit


@pytest.mark.parametrize("events", [[], [done("j1", "w1", 1.0)]])
def test_no_submit_is_an_error(events: list[Event]) -> None:
    with pytest.raises(ValueError, match="submit"):
        rep_measure(events, **PARAMS)


@pytest.mark.parametrize(
    ("burst", "workers", "job_s", "expected"),
    [
        (512, 1, 0.5, 8.05),  # docs/latency-model.md, scenario 1
        (256, 1, 2.0, 16.05),
        (1024, 4, 0.5, 4.05),
        (64, 4, 0.5, 0.55),  # shallow: one wave
        (33, 1, 1.0, 2.05),  # a partial wave still costs a whole job length
    ],
)
def test_ideal_time_matches_design_table(
    burst: int, workers: int, job_s: float, expected: float
) -> None:
    assert ideal_time(burst, workers, 32, job_s, 0.05) == pytest.approx(expected)


def test_ideal_time_rejects_no_slots() -> None:
    with pytest.raises(ValueError, match="workers"):
        ideal_time(10, 0, 32, 0.5, 0.05)


def _rep(p99: float | None, e2e_p50: float) -> dict[str, Any]:
    phase = {"p50": e2e_p50, "p90": e2e_p50, "p99": e2e_p50, "max": e2e_p50}
    return {
        "time_to_first_s": 0.5,
        "time_to_p50_s": 1.0,
        "time_to_p99_s": p99,
        "time_to_p100_s": p99,
        "throughput_jps": 10.0,
        "utilisation": 0.5,
        "efficiency": None,
        "phases": {"queue_wait": None, "service": phase, "e2e": phase},
    }


def test_summarise_reps_median_min_max_skipping_none() -> None:
    reps = [_rep(3.0, 1.0), _rep(None, 5.0), _rep(1.0, 2.0), _rep(2.0, 9.0)]
    s = summarise_reps(reps)
    assert s["time_to_p99_s"] == {"median": 2.0, "min": 1.0, "max": 3.0}
    assert s["e2e_p50_s"] == {"median": 3.5, "min": 1.0, "max": 9.0}
    assert s["efficiency"] is None
    assert s["queue_wait_max_s"] is None
    figures = ["time_to_first_s", "time_to_p50_s", "time_to_p99_s", "time_to_p100_s",
               "throughput_jps", "utilisation", "efficiency"]  # fmt: skip
    phases = [f"{p}_{st}_s" for p in ("queue_wait", "service", "e2e")
              for st in ("p50", "p90", "p99", "max", "mean")]  # fmt: skip
    assert set(s) == {
        *figures,
        *phases,
        "takes_count",
        "takes_got_mean",
        "requests_per_job",
        "held_jobs",
        "held_extra_wait_p99_s",
        *(f"steady_{name}" for name in STEADY_FIGURES),
        *(f"fleet_{name}" for name in FLEET_FIGURES),
    }
    assert s["steady_e2e_p99_s"] is None  # bursts: no steady part
    assert s["fleet_worker_s"] is None  # a fixed fleet: no fleet block
    steady = [{**_rep(1.0, 1.0), "steady": {"e2e_p99_s": v}} for v in (0.4, 0.2, 0.3)]
    assert summarise_reps(steady)["steady_e2e_p99_s"] == {"median": 0.3, "min": 0.2, "max": 0.4}
    with pytest.raises(ValueError):
        summarise_reps([])


def test_summarise_real_reps() -> None:
    rep = rep_measure(four_jobs_two_workers(), **PARAMS).figures
    s = summarise_reps([rep, rep])
    assert s["time_to_p50_s"] == {"median": 0.65, "min": 0.65, "max": 0.65}
    assert s["time_to_p99_s"] is None  # a job failed in each: neither reached 99 % completed
    assert s["service_p50_s"] == {"median": 0.65, "min": 0.65, "max": 0.65}


def test_pooled_phases_pool_jobs_rather_than_average_percentiles() -> None:
    def rep(e2e: list[float]) -> list[Event]:
        events = [ev("submit", 0.0, job=f"j{i}") for i in range(len(e2e))]
        for i, t in enumerate(e2e):
            events += [*run(f"j{i}", i, "w1", 0.0, 0.0), done(f"j{i}", "w1", t)]
        return events

    a = rep_measure(rep([1.0, 2.0, 3.0]), **PARAMS).samples
    b = rep_measure(rep([10.0]), **PARAMS).samples
    pooled = pooled_phases([a, b])
    assert pooled["e2e"] is not None
    assert pooled["e2e"]["p50"] == pytest.approx(2.5)  # median of 1, 2, 3, 10 (not (2 + 10) / 2)
    assert pooled["e2e"]["max"] == pytest.approx(10.0)
    assert pooled["queue_wait"] == {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0, "mean": 0.0}
    assert pooled["e2e"]["mean"] == pytest.approx(4.0)  # (1 + 2 + 3 + 10) / 4, every job once
    with pytest.raises(ValueError, match="no reps"):
        pooled_phases([])


def test_busy_slot_time_never_counts_held_jobs_beyond_the_slots() -> None:
    from jobbench.measure.metrics import busy_slot_ns

    # 2 slots, 4 jobs delivered at once (2 held in a take-ahead buffer): busy 2 slots for 2 s
    spans = {"w0": [(0, 1_000), (0, 1_000), (0, 2_000), (0, 2_000)]}
    assert busy_slot_ns(spans, slots=2) == 4_000
    # a second worker adds its own: 1 slot for 0.5 s
    spans["w1"] = [(500, 1_000)]
    assert busy_slot_ns(spans, slots=2) == 4_500


def test_injected_faults_are_counted_and_the_jobs_that_survived_them_too() -> None:
    def run(job: str, worker: str, at: float) -> list[dict[str, Any]]:
        t = int(at * 1e9)
        return [
            {"t": t, "ev": "claim", "job": job, "take": 1, "worker": worker},
            {"t": t, "ev": "deliver", "job": job, "take": 1, "worker": worker},
        ]

    log: list[dict[str, Any]] = [
        {"t": 0, "ev": "submit", "job": "a"},
        {"t": 0, "ev": "submit", "job": "b"},
        *run("a", "w1", 0.1),
        *run("b", "w1", 0.1),
        {"t": int(0.6e9), "ev": "fault", "route": "job-done", "kind": "500", "job": "a"},
        {"t": int(0.7e9), "ev": "done", "job": "a", "status": "COMPLETED", "worker": "w1"},
        {"t": int(0.6e9), "ev": "fault", "route": "job-done", "kind": "drop", "job": "b"},
        {"t": int(0.8e9), "ev": "fault", "route": "ping", "kind": "drop", "worker": "w1"},
    ]
    m = rep_measure(log, workers=1, slots=2, burst=2, job_seconds=0.5, wake_latency_s=0.0).figures
    assert m["faults"] == {"job-done:500": 1, "job-done:drop": 1, "ping:drop": 1}
    assert m["jobs"]["recovered"] == 1 and m["jobs"]["unfinished"] == 1
    assert "redelivered" not in m["jobs"]


def test_a_job_answered_again_after_it_completed_ran_twice() -> None:
    """A second job-done for a COMPLETED job is `doubled`; a late progress update is not."""
    events = [
        *(ev("submit", 0.0, job=f"j{i}") for i in range(1, 3)),
        *run("j1", 1, "w1", 0.0, 0.1),
        done("j1", "w1", 0.5),
        *run("j2", 1, "w1", 0.0, 0.1),
        done("j2", "w1", 0.6),
        ev("ignored", 0.7, job="j1", worker="w2", status="COMPLETED"),
        ev("ignored", 0.8, job="j2", worker="w1", status="COMPLETED", progress=True),
    ]
    m = rep_measure(events, **PARAMS).figures
    assert m["jobs"]["doubled"] == 1
    assert m["time_to_p100_s"] == pytest.approx(0.6)
