"""Latency distributions (parsing, validation, seeded sampling), fault rules and rate limits."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fake_queue.options import parse_options
from fake_queue.queue import virtual_clock
from fake_queue.queue.faults import (
    RATE_WINDOW_S,
    RUNPOD_RATE_LIMITS,
    FaultInjector,
    FaultRule,
    FaultSpecError,
    RateLimiter,
    parse_fault,
)
from fake_queue.queue.job_queue import JobQueue
from fake_queue.queue.latency import (
    Distribution,
    LatencyModel,
    LatencySampler,
    LatencySpecError,
    parse_distribution,
)
from fake_queue.settings import (
    ServerSettings,
    SettingsError,
    settings_from_mapping,
    settings_from_options,
)
from jobbench.core.sim.engine import simulate_rep
from tests.unit.test_virtual_time import REFERENCE, reference_cell

# ---- parse_distribution ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0.5", Distribution("fixed", 0.5)),
        (" 0.25 ", Distribution("fixed", 0.25)),
        (0.5, Distribution("fixed", 0.5)),
        (2, Distribution("fixed", 2.0)),
        ("0", Distribution("fixed", 0.0)),
        ("uniform:0.4,0.6", Distribution("uniform", 0.4, 0.6)),
        ("uniform:0.5,0.5", Distribution("uniform", 0.5, 0.5)),
        ("normal:0.5,0.02", Distribution("normal", 0.5, 0.02)),
        ("lognormal:-0.7,0.1", Distribution("lognormal", -0.7, 0.1)),
        ({"kind": "uniform", "a": 0.1, "b": 0.2}, Distribution("uniform", 0.1, 0.2)),
        ({"kind": "normal", "a": 1, "b": 0}, Distribution("normal", 1.0, 0.0)),
        ({"a": 0.3}, Distribution("fixed", 0.3)),
        (
            {"kind": "samples", "samples": [0.1, 0.2, 0.3]},
            Distribution("samples", samples=(0.1, 0.2, 0.3)),
        ),
    ],
)
def test_parse_distribution_forms(value: Any, expected: Distribution) -> None:
    assert parse_distribution(value, "take_latency") == expected


def test_parse_distribution_samples_from_file(tmp_path: Path) -> None:
    path = tmp_path / "takes.txt"
    path.write_text("0.41 0.52\n0.63\n\n0.47\n")
    expected = Distribution("samples", samples=(0.41, 0.52, 0.63, 0.47))
    assert parse_distribution(f"samples:{path}", "take_latency") == expected
    assert parse_distribution({"kind": "samples", "file": str(path)}, "take") == expected
    assert parse_distribution(f"samples:{path}", "x").mean == pytest.approx(2.03 / 4)


@pytest.mark.parametrize(
    "value",
    [
        True,
        False,
        "abc",
        "",
        "-1",
        -0.5,
        "inf",
        "nan",
        float("nan"),
        float("inf"),
        "uniform:0.6,0.4",
        "uniform:-1,1",
        "uniform:1",
        "uniform:1,2,3",
        "uniform:a,b",
        "normal:0.5,-1",
        "lognormal:0,-0.1",
        "foo:1,2",
        "fixed",
        {"kind": "bogus"},
        {"kind": "fixed", "a": -1},
        {"kind": "samples", "samples": []},
        {"kind": "samples", "samples": [0.1, -0.2]},
        "samples:/nonexistent/file/x.txt",
    ],
)
def test_parse_distribution_rejects_bad_input(value: Any) -> None:
    with pytest.raises(LatencySpecError) as info:
        parse_distribution(value, "take_latency")
    assert "take_latency" in str(info.value)  # the message names the setting


def test_parse_distribution_rejects_bad_samples_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    words = tmp_path / "words.txt"
    words.write_text("0.1 fast 0.2")
    negative = tmp_path / "neg.txt"
    negative.write_text("0.1 -0.2")
    for path in (empty, words, negative):
        with pytest.raises(LatencySpecError):
            parse_distribution(f"samples:{path}", "hold")


@pytest.mark.parametrize(
    "value",
    [
        "uniform:0,inf",
        "normal:inf,0.1",
        "normal:0.5,inf",
        "lognormal:0,inf",
        {"kind": "uniform", "a": 0, "b": float("inf")},
        {"kind": "samples", "samples": [0.1, float("inf")]},
    ],
)
def test_parse_distribution_rejects_non_finite_parameters(value: Any) -> None:
    """BUG: only `fixed` is checked for finiteness. `uniform:0,inf` is accepted, and the first
    sample that comes out infinite makes `int(seconds * 1e9)` in JobQueue.take raise
    OverflowError: the take answers 500 and its claimed jobs are stranded."""
    with pytest.raises(LatencySpecError):
        parse_distribution(value, "take_latency")


@pytest.mark.parametrize(
    "value",
    [
        {"kind": "samples"},
        {"kind": "uniform", "a": "x", "b": 1},
        {"kind": "normal", "a": None, "b": 1},
        {"kind": "samples", "samples": 5},
        {"kind": "samples", "samples": [0.1, "x"]},
    ],
)
def test_parse_distribution_table_form_errors_are_latency_spec_errors(value: Any) -> None:
    """BUG: the dict/table form lets KeyError, ValueError and TypeError escape. Callers catch
    LatencySpecError only (POST /_bench/latency answers 500; a TOML config with
    `take = {kind = "samples"}` crashes with a traceback instead of a SettingsError)."""
    with pytest.raises(LatencySpecError):
        parse_distribution(value, "take_latency")


# ---- sampling --------------------------------------------------------------------------------


def test_samples_stay_in_range_and_non_negative() -> None:
    rng = random.Random(3)
    uniform = Distribution("uniform", 0.4, 0.6)
    normal = Distribution("normal", 0.01, 0.5)  # often negative before clipping
    lognormal = Distribution("lognormal", -0.7, 0.1)
    samples = Distribution("samples", samples=(0.1, 0.2, 0.7))
    for _ in range(2000):
        assert 0.4 <= uniform.sample(rng) <= 0.6
        assert normal.sample(rng) >= 0.0
        assert lognormal.sample(rng) > 0.0
        assert samples.sample(rng) in (0.1, 0.2, 0.7)
    assert Distribution("fixed", 0.5).sample(rng) == 0.5
    clipped = [normal.sample(rng) for _ in range(500)]
    assert clipped.count(0.0) > 50  # the clip happens (about 49% of draws)


def test_sample_means_are_plausible() -> None:
    rng = random.Random(11)
    for dist in (
        Distribution("uniform", 0.4, 0.6),
        Distribution("normal", 0.5, 0.02),
        Distribution("lognormal", -0.7, 0.1),
        Distribution("samples", samples=(0.1, 0.2, 0.3)),
    ):
        draws = [dist.sample(rng) for _ in range(4000)]
        assert sum(draws) / len(draws) == pytest.approx(dist.mean, rel=0.03)


def test_seeded_sampling_is_repeatable() -> None:
    model = LatencyModel(
        take=Distribution("uniform", 0.1, 0.9),
        wake=Distribution("lognormal", -3, 0.5),
        hold=Distribution("normal", 2.0, 0.5),
        done=Distribution("samples", samples=(0.0, 0.01, 0.02)),
    )

    def draw(seed: int | None) -> list[float]:
        sampler = LatencySampler(model, seed)
        return [
            f() for _ in range(50) for f in (sampler.take, sampler.wake, sampler.hold, sampler.done)
        ]

    assert draw(7) == draw(7)
    assert draw(7) != draw(8)
    assert len(set(draw(None))) > 100


def test_latency_model_from_mapping_and_json_round_trip() -> None:
    model = LatencyModel.from_mapping(
        {
            "take_latency": "uniform:0.4,0.6",
            "wake": 0.01,
            "hold": "5",
            "done_latency": {"kind": "normal", "a": 0.1, "b": 0.01},
        }
    )
    assert model.take == Distribution("uniform", 0.4, 0.6)
    assert model.wake == Distribution("fixed", 0.01)
    assert model.hold == Distribution("fixed", 5.0)
    assert model.done == Distribution("normal", 0.1, 0.01)
    again = LatencyModel.from_mapping(model.to_json())
    assert again == model
    assert "take uniform:0.4,0.6 s" in model.describe()
    base = LatencyModel()
    only_take = LatencyModel.from_mapping({"take": 0.1}, base)
    assert only_take.take.a == 0.1 and only_take.wake == base.wake
    with pytest.raises(LatencySpecError):
        LatencyModel.from_mapping({"queue": 1})


def test_distribution_means() -> None:
    assert Distribution("fixed", 0.5).mean == 0.5
    assert Distribution("uniform", 0.4, 0.6).mean == pytest.approx(0.5)
    assert Distribution("normal", -1, 1).mean == 0.0
    assert Distribution("lognormal", 0, 1).mean == pytest.approx(math.exp(0.5))
    assert Distribution("samples", samples=(1.0, 3.0)).mean == 2.0


# ---- faults ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("job-done:500:0.1", FaultRule("job-done", "status", 0.1, status=500)),
        ("run:429:0.05", FaultRule("run", "status", 0.05, status=429)),
        ("job-take:drop:0.01", FaultRule("job-take", "drop", 0.01)),
        ("status:delay=0.2:0.5", FaultRule("status", "delay", 0.5, delay_s=0.2)),
        ("*:503:1", FaultRule("*", "status", 1.0, status=503)),
        ("purge-queue:400:0", FaultRule("purge-queue", "status", 0.0, status=400)),
        ("ping:599:1.0", FaultRule("ping", "status", 1.0, status=599)),
    ],
)
def test_parse_fault_forms(text: str, expected: FaultRule) -> None:
    rule = parse_fault(text)
    assert rule == expected
    assert parse_fault(rule.describe()) == rule  # describe() round-trips


@pytest.mark.parametrize(
    "text",
    [
        "job-done:500",
        "job-done:500:0.1:x",
        "",
        "nowhere:500:0.1",
        "job-done:600:0.1",
        "job-done:399:0.1",
        "job-done:200:1",
        "job-done:500:1.5",
        "job-done:500:-0.1",
        "job-done:500:nan",
        "job-done:500:often",
        "job-done:delay=x:1",
        "job-done:delay=-1:1",
        "job-done:boom:1",
        "job-done:+500:1",
    ],
)
def test_parse_fault_errors(text: str) -> None:
    with pytest.raises(FaultSpecError) as info:
        parse_fault(text)
    assert "ROUTE:KIND:RATE" in str(info.value) or text in str(info.value)


def test_fault_injector_rates_routes_and_seed() -> None:
    always = FaultInjector((parse_fault("job-done:500:1"),), seed=1)
    assert all(always.pick("job-done") is not None for _ in range(100))
    assert always.pick("job-take") is None
    never = FaultInjector((parse_fault("*:500:0"),), seed=1)
    assert all(never.pick(r) is None for r in ("run", "job-take", "health"))
    star = FaultInjector((parse_fault("*:drop:1"),), seed=1)
    assert star.pick("health").kind == "drop"  # type: ignore[union-attr]

    def picks(seed: int) -> list[bool]:
        inj = FaultInjector((parse_fault("run:429:0.3"),), seed=seed)
        return [inj.pick("run") is not None for _ in range(400)]

    assert picks(5) == picks(5)
    assert picks(5) != picks(6)
    assert 0.2 < sum(picks(5)) / 400 < 0.4
    first = FaultInjector((parse_fault("run:429:1"), parse_fault("run:500:1")), seed=0)
    assert first.pick("run").status == 429  # type: ignore[union-attr]


def test_settings_parse_faults_and_reject_bad_ones() -> None:
    settings = settings_from_mapping(
        {"faults": ["job-done:500:1", "run:drop:0.5"]}, ServerSettings()
    )
    assert [r.describe() for r in settings.faults] == ["job-done:500:1", "run:drop:0.5"]
    with pytest.raises(SettingsError):
        settings_from_mapping({"faults": ["job-done:700:1"]}, ServerSettings())
    with pytest.raises(SettingsError):
        settings_from_mapping({"take_latency": "uniform:2,1"}, ServerSettings())


# ---- rate limits -----------------------------------------------------------------------------


class Clock:
    """The limiter's injected clock, moved by hand in seconds."""

    def __init__(self) -> None:
        self.t = 1000.0

    def now_ns(self) -> int:
        return round(self.t * 1e9)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_rate_limiter_window(clock: Clock) -> None:
    limiter = RateLimiter(RUNPOD_RATE_LIMITS, clock)
    assert limiter.admit("purge-queue")
    limiter.release("purge-queue")
    clock.t += 5
    assert limiter.admit("purge-queue")
    limiter.release("purge-queue")
    assert not limiter.admit("purge-queue")  # 2 per 10 s
    clock.t += RATE_WINDOW_S - 5 - 0.01
    assert not limiter.admit("purge-queue")
    clock.t += 0.02  # the first one left the window
    assert limiter.admit("purge-queue")
    limiter.release("purge-queue")
    assert not limiter.admit("purge-queue")
    clock.t += 5
    assert limiter.admit("purge-queue")


def test_rate_limiter_concurrency(clock: Clock) -> None:
    limiter = RateLimiter(RUNPOD_RATE_LIMITS, clock)
    for _ in range(20):
        assert limiter.admit("cancel")
    assert not limiter.admit("cancel")  # 20 concurrent
    limiter.release("cancel")
    assert limiter.admit("cancel")
    assert not limiter.admit("cancel")
    for _ in range(20):
        limiter.release("cancel")
    # 21 admitted in this window so far; the 100 per 10 s cap is next
    admitted = 21
    while limiter.admit("cancel"):
        limiter.release("cancel")
        admitted += 1
    assert admitted == 100
    clock.t += RATE_WINDOW_S
    assert limiter.admit("cancel")


def test_rate_limiter_rejections_do_not_count(clock: Clock) -> None:
    limiter = RateLimiter({"run": (3, 1)}, clock)
    assert limiter.admit("run")
    for _ in range(10):
        assert not limiter.admit("run")  # concurrency 1; rejected calls use no budget
    limiter.release("run")
    assert limiter.admit("run")
    limiter.release("run")
    assert limiter.admit("run")
    limiter.release("run")
    assert not limiter.admit("run")


def test_rate_limiter_leaves_unlimited_routes_alone(clock: Clock) -> None:
    limiter = RateLimiter(RUNPOD_RATE_LIMITS, clock)
    assert all(limiter.admit("job-take") for _ in range(10_000))
    limiter.release("job-take")  # no error for an unlimited route
    assert all(limiter.admit("health") for _ in range(100))


# ---- a server-side fix: take_extra --------------------------------------------------------------


def test_take_extra_is_read_from_a_latency_table_and_written_only_when_set() -> None:
    fixed = LatencyModel.from_mapping({"take": 0.03, "take_extra": 4})
    assert fixed.take_extra == 4 and fixed.take == Distribution("fixed", 0.03)
    assert fixed.to_json()["take_extra"] == 4
    assert LatencyModel.from_mapping(fixed.to_json()) == fixed
    assert "up to 4 jobs more than asked" in fixed.describe()
    # RunPod's queue: a result reads as before; a PUT to a running queue still resets it
    assert "take_extra" not in LatencyModel().to_json()
    assert LatencyModel().to_json(every=True)["take_extra"] == 0
    assert LatencyModel.from_mapping(LatencyModel().to_json(every=True), fixed).take_extra == 0
    for bad in (-1, 1.5, "4", True, 10_001):
        with pytest.raises(LatencySpecError, match="take_extra"):
            LatencyModel.from_mapping({"take_extra": bad})


def test_take_extra_as_a_flag_and_a_config_key() -> None:
    assert settings_from_options(parse_options(["--take-extra", "8"])).latency.take_extra == 8
    assert settings_from_mapping({"take_extra": 2}, ServerSettings()).latency.take_extra == 2
    table = settings_from_mapping({"latency": {"take_extra": 3}}, ServerSettings())
    assert table.latency.take_extra == 3
    with pytest.raises(SettingsError, match="--take-extra"):
        settings_from_options(parse_options(["--take-extra", "-1"]))


def test_a_take_claims_up_to_take_extra_more_than_it_asked() -> None:
    async def main() -> tuple[int, int, int]:
        queue = JobQueue(LatencySampler(LatencyModel(take_extra=3), 1))
        queue.submit_many(range(10))
        first = queue.take("w1", 4)  # 4 asked, 3 more given
        second = queue.take("w2", 4)  # 3 left: all of them
        waiting = queue.take("w3", 1)
        queue.submit_many(range(5))  # a woken take may get more than asked too
        return len(first.jobs), len(second.jobs), len(waiting.jobs)

    assert virtual_clock.run(main()) == (7, 3, 4)


def test_main_on_a_server_that_hands_out_a_batch_more_simulated() -> None:
    fixed = replace(REFERENCE, take_extra=32)
    cell = replace(reference_cell("drain", 1, 64, 0.5), latency=fixed)
    figures = simulate_rep(cell, seed=1).measure.figures
    # one woken take of 32 brings 64: 32 run, 32 held start as the first end; no second take
    assert figures["time_to_p99_s"] == pytest.approx(0.05 + 0.5 + 0.5, abs=1e-6)
    takes = figures["takes"]
    assert (takes["asked_mean"], takes["got_mean"], takes["full_fraction"]) == (32, 64, 1)
