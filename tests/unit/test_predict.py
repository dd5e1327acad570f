"""The predicted block (core/sim/predict.py): a fake-queue scenario's entry carries the simulated
figures of the same scenario, the table and the page set them beside the measured median, and
scenarios the simulator cannot run get none. No processes: a FakeSession's entry is built
before (and without) any start, and the simulator runs in this process."""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fake_queue.queue.latency import Distribution, LatencyModel
from jobbench.core.real_workers.fake_target import FakeSession
from jobbench.core.scenario.config import Scenario
from jobbench.core.sim import predict as predict_module
from jobbench.core.sim.engine import simulate_rep
from jobbench.core.sim.predict import predict
from jobbench.render.page import html_tables
from jobbench.render.words.explain import predicted_line
from jobbench.results.model import ScenarioResult, Spread
from jobbench.workers.spec import WorkerSpec

FAST = LatencyModel(take=Distribution("fixed", 0.05), wake=Distribution("fixed", 0.01))
DRAIN = Scenario(
    "2w-64j-0.1s", workers=2, slots=8, burst=64, job_seconds=0.1,
    worker=WorkerSpec("model", "drain"), latency=FAST,
)  # fmt: skip
RUNPOD = replace(DRAIN, name="1w-64j-0.1s", workers=1, worker=WorkerSpec("runpod"))
PREDICTED = ("time_to_p50_s", "time_to_p99_s", "time_to_p100_s", "throughput_jps", "efficiency")


class Said:
    """A Progress that keeps its messages (a session reports a skipped prediction there)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)

    def rep_started(self, scenario: str, rep: int, reps: int, burst: int) -> None: ...
    def rep_progress(self, done: int, total: int) -> None: ...
    def rep_finished(self, scenario: str, rep: int, figures: dict[str, Any]) -> None: ...


def entry_of(scenario: Scenario, tmp_path: Path, seed: int | None = 3) -> ScenarioResult:
    return FakeSession(scenario, tmp_path, Said(), seed=seed).entry()


def test_a_model_worker_scenario_entry_holds_simulate_reps_figures(tmp_path: Path) -> None:
    entry = entry_of(DRAIN, tmp_path)
    figures = simulate_rep(DRAIN, seed=3, rep=1).measure.figures
    assert entry.predicted is not None
    block = entry.predicted.model_dump()
    assert block == {
        "policy": "drain",
        **{key: figures[key] for key in PREDICTED},
        "takes_count": figures["takes"]["count"],
        "draws": 1,
    }
    # the model's own cell: 4 rounds of wake-then-take, 0.01 + 0.1 + 3 x (0.05 + 0.1)
    assert block["time_to_p99_s"] == pytest.approx(0.56, abs=1e-6)


def test_a_runpod_worker_is_predicted_by_its_sdk_112_model_over_a_few_draws(
    tmp_path: Path,
) -> None:
    """The SDK's model draws its loop's timing per rep (core/sim/sdk_costs.py), so its
    prediction is the median of a few draws, as for sampled latencies."""
    predicted = entry_of(RUNPOD, tmp_path).predicted
    assert predicted is not None and predicted.policy == "sdk-1.12"
    assert predicted.draws == predict_module.SAMPLED_DRAWS
    draws = [
        simulate_rep(RUNPOD, seed=3, rep=rep).measure.figures["time_to_p99_s"]
        for rep in range(1, predicted.draws + 1)
    ]
    assert len(set(draws)) > 1
    assert predicted.time_to_p99_s == statistics.median(draws)


def test_sampled_latencies_take_the_median_of_a_few_draws() -> None:
    sampled = replace(DRAIN, latency=replace(FAST, take=Distribution("uniform", 0.02, 0.2)))
    predicted = predict(sampled, seed=11)
    assert predicted is not None and predicted.draws == predict_module.SAMPLED_DRAWS
    draws = [
        simulate_rep(sampled, seed=11, rep=rep).measure.figures["time_to_p99_s"]
        for rep in range(1, predicted.draws + 1)
    ]
    assert len(set(draws)) > 1  # each draw differs, so the median is a real choice
    assert predicted.time_to_p99_s == statistics.median(draws)


@pytest.mark.parametrize(
    "scenario",
    [
        replace(DRAIN, worker=WorkerSpec("command", command="python handler.py")),
        replace(DRAIN, faults=("job-done:500:0.1",)),
        replace(RUNPOD, worker=WorkerSpec("runpod", take_ahead=8)),
        replace(RUNPOD, worker=WorkerSpec("runpod", sdk_path=Path("/src/runpod"))),
    ],
    ids=["command", "faults", "runpod-take-ahead", "sdk-checkout"],
)
def test_what_cannot_be_simulated_gets_no_prediction(scenario: Scenario, tmp_path: Path) -> None:
    assert predict(scenario, seed=1) is None
    assert "predicted" not in entry_of(scenario, tmp_path).model_dump(exclude_unset=True)


def test_a_server_with_its_own_fault_rules_gets_no_prediction(tmp_path: Path) -> None:
    session = FakeSession(DRAIN, tmp_path, Said(), seed=1)
    session.faults_in_force = ("job-done:500:0.1",)  # what start() read from a --server
    assert session.entry().predicted is None


def test_a_huge_scenario_is_skipped_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(predict_module, "MAX_JOBS", 63)
    said = Said()
    assert FakeSession(DRAIN, tmp_path, said, seed=1).entry().predicted is None
    assert said.lines == [f"{DRAIN.name}: no prediction: 64 jobs > 63 simulated"]


def measured_at(entry: ScenarioResult, p99_s: float) -> ScenarioResult:
    entry.summary = {"time_to_p99_s": Spread(median=p99_s, min=p99_s, max=p99_s + 0.01)}
    return entry


def test_the_line_names_harness_overhead_for_a_model_worker(tmp_path: Path) -> None:
    entry = measured_at(entry_of(DRAIN, tmp_path), 0.585)
    assert predicted_line(entry) == (
        "predicted (simulated drain model): time to 99 % 0.560 s; measured 0.585 s (median): "
        "harness +25 ms (+4.5%)"
    )
    facts = html_tables.facts(entry, "")
    assert (
        "<dt>predicted</dt><dd>(simulated drain model): time to 99 % 0.560 s; measured 0.585 s "
        "(median): harness +25 ms (+4.5%)</dd>"
    ) in facts


def test_the_line_names_the_sdk_against_its_model_for_a_runpod_worker(tmp_path: Path) -> None:
    entry = entry_of(RUNPOD, tmp_path)
    assert entry.predicted is not None and entry.predicted.time_to_p99_s is not None
    p99 = entry.predicted.time_to_p99_s
    line = predicted_line(measured_at(entry, p99 + 0.1))
    assert line == (
        f"predicted (simulated sdk-1.12 model, median of 3 draws): time to 99 % {p99:.3f} s; "
        f"measured {p99 + 0.1:.3f} s (median): the SDK against its model +100 ms ({0.1 / p99:+.1%})"
    )


def test_no_prediction_no_line(tmp_path: Path) -> None:
    entry = entry_of(replace(DRAIN, faults=("job-done:500:0.1",)), tmp_path)
    assert predicted_line(measured_at(entry, 0.5)) is None
    assert "predicted" not in html_tables.facts(entry, "")
