"""Arrival profiles (core/scenario/load_profiles.py): each spelling's arrivals against its
definition (counts, times, seeded reproducibility), stages in sequence, traces, and one-line
errors."""

from __future__ import annotations

import itertools
import json
import statistics
from pathlib import Path

import pytest

from jobbench.core.scenario.load import Burst, Wave
from jobbench.core.scenario.load_profiles import Arrivals, parse_load
from jobbench.errors import UsageError


def arrivals(spec: str) -> tuple[float, ...]:
    load = parse_load(spec)
    assert isinstance(load, Arrivals)
    return load.times


def test_a_single_burst_is_the_atomic_burst() -> None:
    assert parse_load("burst:1024") == Burst(1024)


def test_periodic_bursts_come_every_period_before_the_end() -> None:
    load = parse_load("bursts:100:every:10s:for:35s")
    assert load.jobs == 400
    assert load.waves() == (Wave(0.0, 100), Wave(10.0, 100), Wave(20.0, 100), Wave(30.0, 100))


def test_a_constant_rate_is_evenly_spaced_for_its_duration() -> None:
    times = arrivals("rate:40/s:for:2s")
    assert len(times) == 80
    assert times[0] == 0.0 and times[-1] == pytest.approx(79 / 40)
    gaps = {round(b - a, 9) for a, b in itertools.pairwise(times)}
    assert gaps == {0.025}
    assert len(arrivals("rate:2.5/s:for:500ms")) == 1  # durations in ms


def test_poisson_arrivals_are_seeded_exponential_and_reproducible() -> None:
    times = arrivals("poisson:200/s:for:50s")
    assert times == arrivals("poisson:200/s:for:50s")  # the same every rep and run
    assert times != arrivals("poisson:200/s:for:50s:seed:2")
    assert 9_700 < len(times) < 10_300  # 10,000 expected, sd 100
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert statistics.fmean(gaps) == pytest.approx(1 / 200, rel=0.03)
    assert statistics.stdev(gaps) == pytest.approx(1 / 200, rel=0.05)  # exponential: sd = mean
    assert all(0 <= t < 50 for t in times) and list(times) == sorted(times)


def test_a_ramp_moves_the_rate_linearly() -> None:
    times = arrivals("ramp:0-100/s:over:10s")
    assert len(times) == 500  # the area under the ramp
    first_half = sum(1 for t in times if t < 5)
    assert first_half == 125  # a quarter of the jobs in the first half of a ramp from 0
    flat = arrivals("ramp:20-20/s:over:5s")
    assert flat == arrivals("rate:20/s:for:5s")


def test_stages_follow_one_another() -> None:
    load = parse_load("ramp:0-40/s:over:10s,rate:40/s:for:5s,burst:7")
    assert isinstance(load, Arrivals)
    assert load.jobs == 200 + 200 + 7
    ramp_end = [t for t in load.times if t < 10]
    assert len(ramp_end) == 200
    assert load.times[200] == 10.0 and load.times[399] == pytest.approx(10 + 199 / 40)
    assert load.waves()[-1] == Wave(15.0, 7)  # the burst at the end of the rate stage


def test_a_trace_replays_submit_times_scaled(tmp_path: Path) -> None:
    trace = tmp_path / "arrivals.txt"
    trace.write_text("# seconds\n10.0\n10.5\n\n12.0\n")
    assert arrivals(f"trace:{trace}") == (0.0, 0.5, 2.0)
    assert arrivals(f"trace:{trace}:speed:2") == (0.0, 0.25, 1.0)
    # The rate scaled at the same instants: twice the jobs, or every other arrival.
    assert arrivals(f"trace:{trace}:scale:2") == (0.0, 0.0, 0.5, 0.5, 2.0, 2.0)
    assert arrivals(f"trace:{trace}:speed:2:scale:0.5") == (0.25,)
    rate = tmp_path / "rate.txt"
    rate.write_text("".join(f"{i / 10}\n" for i in range(100)))
    assert len(arrivals(f"trace:{rate}:scale:0.3")) == 30  # evenly thinned, none lost


def test_a_warm_up_can_be_set_beside_the_stages() -> None:
    load = parse_load("rate:10/s:for:10s,warmup:2s")
    assert isinstance(load, Arrivals) and load.warmup_s == 2.0 and load.jobs == 100
    plain = parse_load("rate:10/s:for:10s")
    assert isinstance(plain, Arrivals) and plain.warmup_s is None
    assert Burst(4).warmup_s is None


def test_a_trace_replays_a_previous_runs_first_rep(tmp_path: Path) -> None:
    rows = [
        {"t": 0, "ev": "submit", "job": "a", "scenario": "s1", "rep": 1},
        {"t": 250000, "ev": "submit", "job": "b", "scenario": "s1", "rep": 1},
        {"t": 300000, "ev": "claim", "job": "a", "scenario": "s1", "rep": 1},
        {"t": 0, "ev": "submit", "job": "c", "scenario": "s1", "rep": 2},
        {"t": 999000, "ev": "submit", "job": "d", "scenario": "s1", "rep": 2},
    ]
    events = tmp_path / "run.events.jsonl"
    events.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert arrivals(f"trace:{events}") == (0.0, 0.25)


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("rate:40:for:10s", "'40' is not a rate; write e.g. 40/s"),
        ("rate:40/s:over:10s", "write it as rate:VALUE:for:VALUE"),
        ("rate:40/s:for:ten", "'ten' is not a duration"),
        ("poisson:5/s:for:1s:sed:3", "unknown option 'sed'"),
        ("burst:0", "'0' is not a count of jobs"),
        ("bursts:5:every:0s:for:10s", "'every' must be above 0"),
        ("steady:40/s", "unknown load 'steady'"),
        ("rate:0.01/s:for:10s", "it submits no job"),
        ("rate:100000/s:for:200s", "more than 10,000,000 jobs"),
        ("trace:/nonexistent/file", "cannot read /nonexistent/file"),
        ("trace:/nonexistent/file:rate:2", "write it as trace:FILE[:speed:K][:scale:M]"),
        ("trace:/nonexistent/file:speed:0", "speed must be a number above 0"),
        ("rate:1/s:for:5s,warmup:1s,warmup:2s", "give warmup:D once"),
        ("warmup:soon,rate:1/s:for:5s", "'soon' is not a duration"),
    ],
)
def test_bad_loads_are_one_line_errors_naming_the_flag(spec: str, says: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_load(spec)
    message = str(caught.value)
    assert message.startswith(f"--load {spec.split(',')[0]}") and says in message
    assert "\n" not in message


def test_a_profiles_rep_line_says_how_late_the_driver_was() -> None:
    from jobbench.render.text.arrivals import pacing_line

    assert pacing_line({"time_to_p99_s": 1.0}) is None  # a burst
    figures = {
        "arrivals": {
            "spec": "rate:50/s:for:1s",
            "submissions": 50,
            "jobs": 50,
            "lateness_p50_s": 0.0002,
            "lateness_p99_s": 0.00371,
            "lateness_max_s": 0.00545,
            "late_jobs": 1,
            "late_bound_s": 0.002,
            "not_sent": 3,
        },
        "phases": {"e2e": {"p50": 0.057, "p99": 0.063}},
    }
    assert pacing_line(figures) == (
        "50 jobs in 50 submissions, each late by p50 0.20 ms, p99 3.71 ms, max 5.45 ms; "
        "1 jobs later than 2 ms, 3 jobs never sent; end-to-end p50 0.057 s, p99 0.063 s"
    )


def test_a_late_submission_is_measured_from_its_intended_time() -> None:
    import asyncio

    from fake_queue.queue.job_queue import JobQueue
    from fake_queue.queue.latency import LatencyModel, LatencySampler
    from jobbench.measure.events import scan_events
    from jobbench.results.events_file import rep_lines

    async def submit() -> list[dict[str, object]]:
        queue = JobQueue(LatencySampler(LatencyModel()))
        queue.submit_many([{}], late_ns=3_000_000)  # 3 ms late
        queue.submit_many([{}])  # on time: no `intended`
        return list(queue.events)

    events = asyncio.run(submit())
    late, on_time = events
    assert late["intended"] == late["t"] - 3_000_000 and "intended" not in on_time
    scan = scan_events(events)
    assert scan.submitted[str(late["job"])] == late["intended"]  # latencies run from it
    assert scan.submitted[str(on_time["job"])] == on_time["t"]
    rows = [json.loads(line) for line in rep_lines("s", 1, events).splitlines()]
    assert rows[0]["intended"] == 0 and rows[0]["t"] == 3_000  # us from the first intended
