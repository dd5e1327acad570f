"""Comparison -> verdict: pass, regression or inconclusive, with the exit code CI acts on."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from jobbench.compare import METRICS, MIN_REPS_FOR_TEST
from jobbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION, UsageError

SIGNIFICANCE = 0.05
Z_ALPHA, Z_POWER = 1.96, 0.84  # two-sided 5 %, 80 % power


@dataclass(frozen=True)
class GateConfig:
    metric: str = "time_to_p99_s"
    max_regression: float = 0.05  # a fraction: 0.05 = 5 % slower is still a pass

    def validate(self) -> GateConfig:
        if self.metric not in METRICS:
            raise UsageError(f"--metric {self.metric}: use one of {', '.join(METRICS)}")
        if not 0 <= self.max_regression < 10:
            raise UsageError(f"--max-regression {self.max_regression:.1%}: use e.g. 5%")
        return self


def parse_percent(text: str) -> float:
    """`5%`, `5` or `0.05` -> 0.05."""
    raw = text.strip().removesuffix("%")
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"--max-regression {text!r}: write a percentage like 5%") from None
    return value / 100 if text.strip().endswith("%") or value >= 1 else value


def reps_to_settle(base: list[float], cand: list[float]) -> int | None:
    """Reps a side for 80 % power to see this difference (normal approximation)."""
    if len(base) < 2 or len(cand) < 2:
        return None
    delta = abs(statistics.median(cand) - statistics.median(base))
    spread = math.sqrt((statistics.variance(base) + statistics.variance(cand)) / 2)
    if delta == 0:
        return None
    if spread == 0:
        return MIN_REPS_FOR_TEST + 1
    return max(MIN_REPS_FOR_TEST + 1, math.ceil(2 * ((Z_ALPHA + Z_POWER) * spread / delta) ** 2))


def judge_row(row: dict[str, Any], gate: GateConfig) -> dict[str, Any]:
    figure = row["metrics"][gate.metric]
    change, p_value = figure["change"], figure["p_value"]
    if change is None:
        return {"verdict": "inconclusive", "reason": "no measurements on one side"}
    tested = p_value is not None
    if change <= gate.max_regression:
        better = change < -gate.max_regression and (not tested or p_value < SIGNIFICANCE)
        return {
            "verdict": "better" if better else "pass",
            "reason": f"{change:+.1%} (limit +{gate.max_regression:.1%})",
        }
    if not tested:
        return {
            "verdict": "regression",
            "reason": f"{change:+.1%} > +{gate.max_regression:.1%}; fewer than "
            f"{MIN_REPS_FOR_TEST} reps a side, so no significance test: the "
            "threshold alone decides",
        }
    if p_value < SIGNIFICANCE:
        return {
            "verdict": "regression",
            "reason": f"{change:+.1%} > +{gate.max_regression:.1%}, p = {p_value:.3g}",
        }
    needed = reps_to_settle(figure["values"]["baseline"], figure["values"]["candidate"])
    hint = f"; about {needed} reps a side would settle it" if needed else ""
    return {
        "verdict": "inconclusive",
        "reason": f"{change:+.1%} > +{gate.max_regression:.1%} but not significant "
        f"(p = {p_value:.3g}){hint}",
    }


def judge(comparison: dict[str, Any], gate: GateConfig) -> int:
    """Fill in verdicts (per row and overall) and return the exit code."""
    verdicts = []
    for row in comparison["rows"]:
        judged = judge_row(row, gate)
        row["verdict"], row["reason"] = judged["verdict"], judged["reason"]
        verdicts.append(judged["verdict"])
    if "regression" in verdicts:
        overall, code = "regression", EXIT_REGRESSION
    elif "inconclusive" in verdicts:
        overall, code = "inconclusive", EXIT_INCONCLUSIVE
    else:
        overall, code = "pass", EXIT_OK
    comparison["verdict"] = overall
    comparison["gate"] = {
        "metric": gate.metric,
        "max_regression": gate.max_regression,
        "significance": SIGNIFICANCE,
    }
    return code
