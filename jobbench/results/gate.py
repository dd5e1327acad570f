"""Comparison -> verdicts per row and overall, with the exit code CI acts on (docs/ci.md).

The per-row rule is results/decision.py; here it is applied across the rows of one call: each
row is held to its share of the family-wise false-alarm rate at its last look, incomplete sides
never pass, and every row says which reps it set aside, how noisy it is and why it stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jobbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION, UsageError
from jobbench.results.compare import METRICS
from jobbench.results.decision import Decision, Excluded, Rule, decide, evidence_from, look_alpha
from jobbench.results.model import Comparison, Gate, Row

VERDICTS = {"regression", "pass", "better", "inconclusive"}


@dataclass(frozen=True)
class GateConfig:
    metric: str | None = None  # None: each scenario's own (suite), else time to 99 %
    max_regression: float = 0.05  # a fraction: 0.05 = 5 % slower is still a pass

    def validate(self) -> GateConfig:
        if self.metric is not None and self.metric not in METRICS:
            raise UsageError(f"--metric {self.metric}: use one of {', '.join(METRICS)}")
        if not 0 < self.max_regression < 10:
            raise UsageError(f"--max-regression {self.max_regression:.1%}: use e.g. 5%")
        return self

    def rule(self) -> Rule:
        return Rule(threshold=self.max_regression)


def parse_percent(text: str) -> float:
    """`5%`, `5` or `0.05` -> 0.05."""
    raw = text.strip().removesuffix("%")
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"--max-regression {text!r}: write a percentage like 5%") from None
    return value / 100 if text.strip().endswith("%") or value >= 1 else value


def judge(comparison: Comparison, gate: GateConfig) -> int:
    """Fill in verdicts (per row and overall) and return the exit code."""
    rule = gate.rule()
    rows = comparison.rows
    for row in rows:
        ev = evidence_from(row.metrics[row.gated])
        alpha = look_alpha(rule, len(rows), row.looks)
        decision = decide(ev, rule, alpha)
        row.verdict = "inconclusive" if decision.verdict == "unsettled" else decision.verdict
        row.reason = _reason(row, decision, ev.excluded, ev.spread, rule)
        row.alpha = alpha
        row.p_within = decision.p_within
        row.mdc = decision.mdc
    overall, code, why = _overall(comparison)
    comparison.verdict = overall
    comparison.reason = why
    comparison.gate = Gate(
        metrics=sorted({row.gated for row in rows}),
        max_regression=rule.threshold,
        false_alarm=rule.false_alarm,
        miss=rule.miss,
    )
    return code


def _reason(
    row: Row,
    decision: Decision,
    excluded: Sequence[Excluded],
    spread: tuple[float | None, float | None],
    rule: Rule,
) -> str:
    parts = [decision.reason]
    if excluded:
        parts.append(
            "set aside: " + ", ".join(f"{e.side} rep {e.rep} ({e.reason})" for e in excluded)
        )
    noise = max((s for s in spread if s is not None), default=None)
    if noise is not None and noise > rule.threshold:
        parts.append(
            f"its noise (±{noise:.1%} rep to rep) is above the {rule.threshold:.0%} threshold"
        )
    if decision.verdict == "unsettled":
        mdc = decision.mdc
        parts.append(
            f"these reps could detect a slowdown of {mdc:+.0%} or more"
            if mdc is not None
            else "these reps are too few for any test at this false-alarm rate"
        )
    if row.stopped:
        parts.append(f"stopped: {row.stopped}")
    return "; ".join(parts)


def _overall(comparison: Comparison) -> tuple[str, int, str]:
    rows = comparison.rows
    verdicts = [row.verdict for row in rows]
    slower = [row.scenario for row in rows if row.verdict == "regression"]
    incomplete = [
        f"{key} ({side.label}) is incomplete: {side.error or 'not every rep ran'}"
        for key, side in (("A", comparison.baseline), ("B", comparison.candidate))
        if not side.complete
    ]
    if incomplete:  # never a pass, whatever the rows that did run say
        found = f"; regression so far in {', '.join(slower)}" if slower else ""
        return "inconclusive", EXIT_INCONCLUSIVE, "; ".join(incomplete) + found
    if slower:
        return "regression", EXIT_REGRESSION, f"slower in {', '.join(slower)}"
    if "inconclusive" in verdicts:
        open_rows = [r.scenario for r in rows if r.verdict == "inconclusive"]
        return "inconclusive", EXIT_INCONCLUSIVE, f"not settled: {', '.join(open_rows)}"
    return "pass", EXIT_OK, "no scenario is slower than the threshold"
