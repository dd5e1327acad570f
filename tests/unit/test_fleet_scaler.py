"""The autoscaled fleet's rules (fake_queue/queue/autoscaled_fleet.py), each on scripted arrivals in
virtual time (core/sim/engine.py): the unmodified queue and model policies, the platform deciding,
so every decision's instant is exact. Scaled-down latencies: take 0.05 s, wake 0.01 s, hold 2 s.

The Scaler seam (fake_queue/queue/scalers.py) last: a third rule, planted in the registry, is
read from a spec, names its scenario, decides a simulated rep's scale-ups and reads in the
legend, with nothing else changed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from fake_queue.queue.autoscaled_fleet import FleetSettings, FleetSettingsError
from fake_queue.queue.latency import Distribution, LatencyModel
from fake_queue.queue.scalers import SCALERS, Decision, Scaler, ScalerSettings, Seen
from jobbench.core.scenario.build import build_scenario
from jobbench.core.scenario.config import Scenario, scenario_name
from jobbench.core.scenario.fleet_spec import parse_autoscale
from jobbench.core.scenario.worker import worker_spec
from jobbench.core.sim.engine import simulate_rep
from jobbench.core.sim.sim_workers import MODEL_PROCESS_START_S
from jobbench.errors import UsageError
from jobbench.render.words.explain import fleet_settings_text

FAST = LatencyModel(
    take=Distribution("fixed", 0.05),
    wake=Distribution("fixed", 0.01),
    hold=Distribution("fixed", 2.0),
    done=Distribution("fixed", 0.0),
)


def scenario(
    spec: str, *, workers: int = 4, burst: int = 64, take_ahead: int = 0, **kw: Any
) -> Scenario:
    policy = "take-ahead" if take_ahead else "drain"
    return build_scenario(
        name="fleet",
        workers=workers,
        slots=4,
        burst=burst,
        job_seconds=kw.pop("job_seconds", 0.5),
        worker=worker_spec("model", policy, take_ahead, None, None),
        latency=FAST,
        autoscale=spec,
        **kw,
    )


def run(s: Scenario, seed: int = 1) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    outcome = simulate_rep(s, seed=seed)
    figures = outcome.measure.figures
    assert figures["jobs"]["completed"] == s.load.jobs  # none lost, none doubled (conservation)
    return figures, outcome.events


def since_begin(events: list[dict[str, Any]], ev: str) -> list[tuple[float, dict[str, Any]]]:
    begin = next(e["t"] for e in events if e["ev"] == "fleet_begin")
    return [(round((e["t"] - begin) / 1e9, 6), e) for e in events if e["ev"] == ev]


def test_queue_delay_adds_one_worker_each_evaluation_once_a_job_waited_the_threshold() -> None:
    figures, events = run(scenario("queue-delay=2,active=1,cold=0.3,every=1,idle=1", burst=256))
    ups = since_begin(events, "scale_up")
    # The burst is in at 0; the oldest job has waited 2 s at the evaluation at 2 s: one worker
    # a look (step 1), up to --workers 4 in all.
    assert [t for t, _ in ups] == [2.0, 3.0, 4.0]
    assert all("queue delay" in e["reason"] for _, e in ups)
    starts = dict((e["worker"], t) for t, e in since_begin(events, "worker_start"))
    polls = dict((e["worker"], t) for t, e in since_begin(events, "worker_polling"))
    for t, e in ups:  # the cold start: the modelled 0.3 s, then the process's start-up
        assert starts[e["worker"]] == pytest.approx(t + 0.3, abs=1e-6)
        assert polls[e["worker"]] == pytest.approx(t + 0.3 + MODEL_PROCESS_START_S, abs=1e-6)
    fleet = figures["fleet"]
    assert fleet["cold_starts"] == 3 and fleet["peak_workers"] == 4
    assert fleet["first_scale_up_s"] == 2.0
    assert fleet["scale_up_delay_s"] == pytest.approx(2.0 + 0.3 + MODEL_PROCESS_START_S)
    assert fleet["cold_start_s"]["median"] == pytest.approx(0.3 + MODEL_PROCESS_START_S)


def test_queue_delay_starts_a_first_worker_at_once_from_zero_and_not_without_from_zero() -> None:
    _, events = run(scenario("queue-delay=3,active=0,cold=0", burst=8))
    ((t, up),) = since_begin(events, "scale_up")[:1]
    assert t == 0.0 and up["reason"] == "a job is queued and no worker runs"
    _, events = run(scenario("queue-delay=3,active=0,cold=0,from-zero=no", burst=8))
    assert since_begin(events, "scale_up")[0][0] == 3.0  # only once a job waited 3 s


def test_request_count_keeps_about_one_worker_per_n_jobs_within_max() -> None:
    _, events = run(scenario("request-count=16,active=0,cold=0.2", workers=8, burst=40))
    ups = since_begin(events, "scale_up")
    # ceil(40 / 16) = 3 workers at the first look, at once (no step limit by default)
    assert [t for t, _ in ups] == [0.0, 0.0, 0.0]
    assert "40 queued + 0 in progress / 16 = 3 workers" in ups[0][1]["reason"]
    _, events = run(scenario("request-count=4,active=1,cold=0.2", workers=3, burst=400))
    assert len(since_begin(events, "scale_up")) == 2  # max 3, one of them active


def test_request_count_counting_queued_only_scales_less_while_jobs_run() -> None:
    # 4 jobs/s of 2 s each: about 8 run at once, few wait; counting queued + in progress
    # wants ceil(8 / 4) = 2 workers or more, counting the queue alone mostly 1.
    spec = "request-count=4,active=1,cold=0.5,idle=3"
    load = "rate:4/s:for:10s"
    all_in, _ = run(scenario(spec, workers=8, job_seconds=2, load=load))
    queued_only, _ = run(scenario(spec + ",count=queued", workers=8, job_seconds=2, load=load))
    assert queued_only["fleet"]["worker_s"] < all_in["fleet"]["worker_s"]
    assert all_in["fleet"]["peak_workers"] >= 2


def test_step_bounds_the_workers_one_evaluation_adds() -> None:
    _, events = run(scenario("request-count=4,active=0,cold=0.5,step=2", workers=6, burst=200))
    times = [t for t, _ in since_begin(events, "scale_up")]
    assert times == [0.0, 0.0, 1.0, 1.0, 2.0, 2.0]


def test_idle_timeout_stops_an_added_worker_exactly_after_its_last_job_never_an_active_one() -> (
    None
):
    figures, events = run(scenario("queue-delay=1,active=1,cold=0.1,idle=1.5", burst=128))
    downs = since_begin(events, "scale_down")
    assert downs and all(e["reason"] == "idle 1.5 s" for _, e in downs)
    active = "fleet-w0"
    assert active not in {e["worker"] for _, e in downs}
    idle_from = {}
    for t, e in since_begin(events, "worker_idle"):
        idle_from[e["worker"]] = t  # its last idle start: after its last job
    for t, e in downs:
        assert t == pytest.approx(idle_from[e["worker"]] + 1.5, abs=1e-6)
    stops = {e["worker"]: e for _, e in since_begin(events, "worker_stop")}
    assert set(stops) == {e["worker"] for _, e in downs} and all(
        e["rc"] == 0 for e in stops.values()
    )
    lives = figures["fleet"]["workers"]
    assert lives[active]["active"] and lives[active]["stopped_s"] is None
    # billed from the decision to the stop; the active one for the whole rep
    for life in lives.values():
        if not life["active"]:
            assert life["billed_s"] == pytest.approx(life["stopped_s"] - life["decided_s"])
    assert lives[active]["billed_s"] == pytest.approx(figures["fleet"]["rest_s"])
    assert figures["fleet"]["worker_s"] == pytest.approx(sum(w["billed_s"] for w in lives.values()))


def test_never_more_workers_than_max_and_the_size_over_time_adds_up() -> None:
    figures, _ = run(scenario("request-count=1,active=2,cold=0.2", workers=5, burst=300))
    size = figures["fleet"]["size"]
    assert max(n for _, n in size) == 5 == figures["fleet"]["peak_workers"]
    assert size[0] == [0.0, 5] and size[-1][1] == 2  # back to the active workers at rest


def test_take_ahead_hides_jobs_from_the_scaler_and_they_are_counted() -> None:
    figures, _ = run(
        scenario("queue-delay=1,active=1,cold=0.5", take_ahead=16, burst=256, job_seconds=0.5)
    )
    hidden = [e["hidden"] for e in figures["fleet"]["evaluations"]]
    assert max(hidden) == figures["fleet"]["hidden_max"] > 0  # held in a buffer, not queued
    drained, _ = run(scenario("queue-delay=1,active=1,cold=0.5", burst=256, job_seconds=0.5))
    assert drained["fleet"]["hidden_max"] == 0


def test_a_stopping_worker_gets_no_job_after_the_decision_and_every_job_ends_once() -> None:
    """Take-ahead workers come and go under a request-count scaler with a short idle
    timeout: each added worker drains its buffer and stops; no job is delivered to a worker
    after its stop was decided, and conservation holds (run() checks every job ended once).
    A worker stopped while its buffer holds jobs is the fake target's test (SIGTERM:
    tests/e2e/test_autoscale.py), where the worker's own shutdown is what runs them."""
    figures, events = run(
        scenario(
            "request-count=2,active=0,cold=0,idle=0.2", take_ahead=32, burst=300, job_seconds=0.2
        )
    )
    stopped_at = {e["worker"]: e["t"] for e in events if e["ev"] == "scale_down"}
    assert len(stopped_at) == figures["fleet"]["cold_starts"] >= 4
    delivered = [e for e in events if e["ev"] == "deliver" and e["worker"] in stopped_at]
    assert delivered and all(e["t"] <= stopped_at[e["worker"]] for e in delivered)
    assert figures["held"]["buffered_jobs"] > 0


def test_the_same_seed_gives_the_same_fleet_bit_for_bit() -> None:
    s = scenario("queue-delay=1,active=1,cold=lognormal:-1,0.5", burst=200)
    one, events_one = run(s, seed=7)
    two, events_two = run(s, seed=7)
    assert events_one == events_two and one == two
    other, _ = run(s, seed=8)
    assert other["fleet"]["cold_start_s"] != one["fleet"]["cold_start_s"]  # the draws are seeded


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("active=1", "name the scaler"),
        ("queue-delay=4,request-count=2", "one scaler"),
        ("queue-delay=x", "queue-delay=x: not a number"),
        ("queue-delay=4,active=9", "active: must be 0 to max workers (4), got 9"),
        ("queue-delay=4,idle=0", "idle: must be a positive number of seconds"),
        ("queue-delay=4,cold=uniform:2", "cold=uniform:2"),
        ("queue-delay=4,colour=red", "unknown key 'colour'"),
        ("queue-delay=4,count=some", "count=some: use count=all"),
        ("queue-delay", "is not KEY=VALUE"),
    ],
)
def test_a_bad_autoscale_spec_is_a_one_line_error_naming_the_key(spec: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_autoscale(spec, 4)
    assert "--autoscale" in str(caught.value) and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_spec_reads_back_from_the_json_it_is_saved_and_sent_as() -> None:
    settings = parse_autoscale("request-count=8,active=1,idle=3,cold=uniform:0.5,2,step=2", 6)
    assert FleetSettings.from_json(settings.to_json(), settings.id_prefix) == settings
    assert replace(FleetSettings(), scaler="request-count").added_at_most == 3  # its max


class EveryQueued(Scaler):
    """A rule of the test's own: one worker for each queued job, whatever has waited."""

    name = "every-queued"
    metavar = "JOBS"
    example = "1"
    label = "eq"

    def value_problem(self, value: float) -> str | None:
        return None if value == 1 else f"must be 1, got {value:g}"

    def default_step(self, max_workers: int) -> int:
        return max_workers

    def decide(self, seen: Seen, settings: ScalerSettings) -> Decision:
        return Decision(min(seen.queued, settings.added_at_most), seen.queued, "jobs are queued")

    def wording(self, value: float) -> str:
        return "every queued job"


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Scaler:
    rule = EveryQueued()
    monkeypatch.setitem(SCALERS, rule.name, rule)  # undone after the test
    return rule


def test_the_rules_have_names_and_labels_of_their_own() -> None:
    rules = list(SCALERS.values())
    assert [rule.name for rule in rules] == ["queue-delay", "request-count"]
    assert len({rule.label for rule in rules}) == len(rules)
    assert all(name == rule.name for name, rule in SCALERS.items())


def test_a_rule_added_to_the_registry_is_read_named_run_and_worded(planted: Scaler) -> None:
    settings = parse_autoscale("every-queued=1,active=0,cold=0", 4)
    assert settings.rule is planted and settings.added_at_most == 4
    assert scenario_name(4, 8, 0.5, None, settings) == "4w-8j-0.5s-eq1"
    again = FleetSettings.from_json(settings.to_json(), settings.id_prefix)
    assert again.rule is planted and again.added_at_most == 4
    assert fleet_settings_text(settings.to_json()).startswith("autoscaled: every queued job, ")
    _, events = run(scenario("every-queued=1,active=0,cold=0", burst=8))
    ups = since_begin(events, "scale_up")
    assert [t for t, _ in ups] == [0.0] * 4 and ups[0][1]["reason"] == "jobs are queued"
    with pytest.raises(FleetSettingsError, match="scaler_value: must be 1, got 2"):
        FleetSettings(scaler="every-queued", scaler_value=2)
