"""A fake-queue scenario's predicted figures: the same scenario simulated in virtual time
(core/sim/engine.py), saved beside the measured reps so the harness overhead (model worker) or the
SDK's gap from its model (runpod worker) is known for every scenario (docs/simulation.md,
"Predicted beside measured")."""

from __future__ import annotations

import statistics
from collections.abc import Callable

from jobbench.core.scenario.config import Scenario
from jobbench.core.sim.engine import check_simulable, simulate_rep
from jobbench.errors import RunFailed, UsageError
from jobbench.results.model_result import Predicted
from jobbench.workers.policies import SDK_BASED

# Above this many jobs a prediction would hold the started workers idle too long (about 0.12 ms
# of wall time per job on this 2-core VM: 50,000 jobs take about 6 s); the run says it skipped.
MAX_JOBS = 200_000
# Sampled latencies, or an SDK-based policy's loop timing (core/sim/sdk_costs.py): one simulated
# rep is one draw, so the prediction is the median of a few.
SAMPLED_DRAWS = 3
FIGURES = ("time_to_p50_s", "time_to_p99_s", "time_to_p100_s", "throughput_jps", "efficiency")


def is_sampled(scenario: Scenario, policy: str) -> bool:
    """Whether one simulated rep of `scenario`, run by `policy`, is one draw of several."""
    latency = scenario.latency
    sampled = (latency.take, latency.wake, latency.hold, latency.done)
    return policy in SDK_BASED or any(d.kind != "fixed" for d in sampled)


def predict(
    scenario: Scenario, seed: int | None, say: Callable[[str], None] = lambda _: None
) -> Predicted | None:
    """The scenario simulated (the run's seed; several draws' median for sampled latencies and
    the SDK's models), or None where it cannot be: a command worker, a checkout's SDK,
    take-ahead on runpod, faults (silently: nothing to predict), or a scenario too large or a
    model that hangs (`say` why)."""
    try:
        policy = check_simulable(scenario)
    except UsageError:
        return None
    if scenario.burst > MAX_JOBS:
        say(f"{scenario.name}: no prediction: {scenario.burst} jobs > {MAX_JOBS:,} simulated")
        return None
    draws = SAMPLED_DRAWS if is_sampled(scenario, policy) else 1
    try:
        reps = [simulate_rep(scenario, seed=seed, rep=rep) for rep in range(1, draws + 1)]
    except RunFailed as exc:
        say(f"{scenario.name}: no prediction: {exc}")
        return None
    figures = [outcome.measure.figures for outcome in reps]
    block = {key: _median([f[key] for f in figures]) for key in FIGURES}
    takes = _median([f["takes"]["count"] for f in figures])
    return Predicted.model_validate(
        {"policy": policy, **block, "takes_count": takes, "draws": draws}
    )


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None
