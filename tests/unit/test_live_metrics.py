"""Live figures from client-side records, and the JOB rows of Locust's stats."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from jobbench.clients.live_records import BurstRecord, HealthSample, JobRecord
from jobbench.clients.locust_stats import job_stats
from jobbench.commands.locust import LocustRequest, json_paths, judge, locust_argv
from jobbench.errors import RunFailed
from jobbench.measure import metrics
from jobbench.measure.live_metrics import live_events, live_rep_measure

S = 1_000_000_000
T0 = 50 * S


def job(index: int, *, sent: float, done: float | None, status: str = "COMPLETED") -> JobRecord:
    return JobRecord(
        index,
        {"seconds": 1},
        outcome="accepted",
        id=f"j{index}",
        sent_ns=T0 + int(sent * S),
        status=status,
        last_pending_ns=T0 + int((done or sent) * S) - S // 10,
        done_ns=None if done is None else T0 + int(done * S),
        delay_ms=500.0,
        execution_ms=1000.0,
        worker=f"w{index % 2}",
    )


def record() -> BurstRecord:
    jobs = [job(i, sent=0.01 * i, done=2.0 + 0.1 * i) for i in range(10)]
    jobs.append(JobRecord(10, {}, outcome="unknown"))
    jobs.append(JobRecord(11, {}, outcome="rejected"))
    health = [HealthSample(T0 + S, 8, 2, 2, 0), HealthSample(T0 + 2 * S, 0, 4, 2, 0)]
    return BurstRecord(jobs, health, Counter(run_requests=15, run_throttled=3))


def test_live_reps_have_the_keys_of_fake_reps_and_client_side_times() -> None:
    measure = live_rep_measure(record())
    rep = measure.figures
    fake_keys = {"time_to_first_s", "time_to_p50_s", "time_to_p99_s", "time_to_p100_s"}
    fake_keys |= {"throughput_jps", "jobs", "phases", "takes", "split", "utilisation"}
    fake_keys |= {"ideal_s", "efficiency"}
    assert fake_keys <= set(rep)
    assert rep["time_to_first_s"] == pytest.approx(2.0)
    assert rep["time_to_p50_s"] == pytest.approx(2.4)  # the 5th of 10 terminal jobs
    assert rep["time_to_p100_s"] == pytest.approx(2.9)
    assert rep["phases"]["queue_wait"]["p50"] == 0.5  # the platform's delayTime
    assert rep["phases"]["service"]["max"] == 1.0  # its executionTime
    assert rep["phases"]["e2e"]["max"] == pytest.approx(2.9 - 0.09)  # done - sent, per job
    assert rep["jobs"]["submitted"] == 10 and rep["jobs"]["completed"] == 10
    assert rep["jobs"]["unknown"] == 1 and rep["jobs"]["rejected"] == 1
    assert rep["submission"]["span_s"] == pytest.approx(0.09)
    assert rep["submission"]["throttled"] == 3
    assert rep["split"]["jobs_per_worker"] == {"w0": 5, "w1": 5}
    assert rep["follow"]["terminal_uncertainty"]["max"] == pytest.approx(0.1)
    assert rep["health"]["max_in_queue"] == 8 and rep["health"]["samples"][0][0] == 1.0
    assert rep["ideal_s"] is None and rep["takes"]["count"] is None and "partial" not in rep
    summary = metrics.summarise_reps([rep])
    assert summary["time_to_p99_s"] == {"median": 2.9, "min": 2.9, "max": 2.9}
    assert metrics.pooled_phases([measure.samples])["service"] is not None


def test_jobs_jobbench_cancelled_are_counted_but_not_measured() -> None:
    rec = record()
    for j in rec.jobs[5:10]:
        j.status, j.done_ns, j.cancelled_by_us = "CANCELLED", None, True
    rec.stopped = "interrupted"
    rep = live_rep_measure(rec).figures
    assert rep["jobs"]["cancelled"] == 5 and rep["jobs"]["cancelled_by_jobbench"] == 5
    assert rep["time_to_p50_s"] == pytest.approx(2.4) and rep["time_to_p100_s"] is None
    assert rep["partial"] == "interrupted"


def test_a_burst_with_no_job_accepted_has_no_times_and_no_throughput() -> None:
    rec = BurstRecord([JobRecord(0, {}, outcome="unknown"), JobRecord(1, {}, outcome="rejected")])
    rep = live_rep_measure(rec).figures
    times = ("time_to_first_s", "time_to_p50_s", "time_to_p99_s", "time_to_p100_s")
    assert [rep[key] for key in times] == [None] * 4 and rep["throughput_jps"] is None
    assert rep["jobs"]["submitted"] == 0 and rep["submission"]["span_s"] is None
    assert rep["phases"] == {"queue_wait": None, "service": None, "e2e": None}


def test_live_events_use_the_event_log_shape() -> None:
    events = live_events(record())
    kinds = Counter(e["ev"] for e in events)
    assert kinds == {"submit": 10, "done": 10, "health": 2}
    assert [e["t"] for e in events] == sorted(e["t"] for e in events)


def rows(jobs: int, failures: int) -> list[dict[str, object]]:
    return [
        {"method": "POST", "name": "/run", "num_requests": 99, "num_failures": 40},
        {
            "method": "JOB",
            "name": "run + status",
            "num_requests": jobs,
            "num_failures": failures,
            "max_response_time": 900.0,
            "response_times": {"250": jobs - 1, "900": 1},
        },
    ]


def test_job_stats_read_only_the_job_rows() -> None:
    stats = job_stats(rows(200, 1))
    assert (stats.jobs, stats.failures, stats.p50_ms, stats.max_ms) == (200, 1, 250.0, 900.0)
    assert stats.fail_ratio == 0.005


def test_a_bucketed_percentile_above_the_max_is_clamped_and_said() -> None:
    # Locust counts 1,275 ms in its 1,300 ms bucket and keeps the max, 1,275 ms, to the ms.
    job_row = {
        "method": "JOB",
        "name": "run + status",
        "num_requests": 200,
        "num_failures": 0,
        "max_response_time": 1275.0,
        "response_times": {"250": 100, "1300": 100},
    }
    stats = job_stats([job_row])
    assert (stats.p50_ms, stats.p99_ms, stats.max_ms) == (250.0, 1275.0, 1275.0)
    assert stats.clamped == (("p99", 1300.0),)
    line = stats.describe()
    assert "p99 1.275 s, max 1.275 s" in line and "p99 1.300" not in line
    assert "Locust's buckets" in line and "p99's bucket, 1.300 s, is above the max" in line


def test_judge_exits_4_only_over_the_max_fail_ratio(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(rows(200, 2)))
    assert judge(path, 0.01, 1) == 0  # Locust's own exit 1 (any failure) is not the verdict
    path.write_text(json.dumps(rows(200, 3)))
    with pytest.raises(RunFailed, match="--max-fail-ratio"):
        judge(path, 0.01, 0)
    with pytest.raises(RunFailed, match="exited with code 2"):
        judge(tmp_path / "missing.json", 0.01, 2)


def test_locust_argv_and_the_json_file_name(tmp_path: Path) -> None:
    req = LocustRequest(headless=True, run_time="5s", extra=("RunUser",))
    argv = locust_argv(req, "http://127.0.0.1:1/v2/local", tmp_path / "locust")
    assert argv[1:3] == ["-m", "locust"] and "--headless" in argv and argv[-1] == "RunUser"
    assert argv[argv.index("--json-file") + 1] == str(tmp_path / "locust")
    mine = LocustRequest(json_file=Path("out/stats.json"))
    assert json_paths(mine, tmp_path) == (Path("out/stats"), Path("out/stats.json"))
    ui = locust_argv(mine, "http://127.0.0.1:1/v2/local", Path("out/stats"))
    assert ui[ui.index("--web-host") + 1] == "127.0.0.1" and "--headless" not in ui
    worker = LocustRequest(locust_worker=True, extra=("--master-host", "h"))
    assert locust_argv(worker, None, tmp_path)[-3:] == ["--worker", "--master-host", "h"]


def test_a_live_endpoints_fleet_is_what_health_counted_in_the_fake_queues_shape() -> None:
    """Workers running + idle from /health over time: 1, then 3 (two scale-ups), then 2."""
    samples = [
        HealthSample(T0 + 0 * S, 0, 1, 1, 0),
        HealthSample(T0 + 1 * S, 5, 1, 1, 2),  # 2 workers came up
        HealthSample(T0 + 3 * S, 0, 0, 0, 2),  # one went away
        HealthSample(T0 + 4 * S, 0, 0, 0, 2),
    ]
    jobs = [job(i, sent=0.0, done=2.0) for i in range(12)]
    rep = live_rep_measure(BurstRecord(jobs, samples, Counter(run_requests=12))).figures
    fleet = rep["fleet"]
    assert fleet["source"] == "health" and fleet["workers"] == {}
    assert fleet["size"] == [[0.0, 1], [1.0, 3], [3.0, 2]]
    assert fleet["peak_workers"] == 3 and fleet["cold_starts"] == 2
    assert fleet["first_scale_up_s"] == 1.0
    assert fleet["worker_s"] == pytest.approx(1 * 1 + 3 * 2 + 2 * 1)  # the size integrated
    assert fleet["jobs_per_worker_s"] == pytest.approx(12 / 9)
    assert fleet["hidden_max"] is None and fleet["evaluations"] == []
    summary = metrics.summarise_reps([rep])
    assert summary["fleet_worker_s"] == {"median": 9.0, "min": 9.0, "max": 9.0}
