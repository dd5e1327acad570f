"""Comparison -> verdicts per row and overall, with the exit code CI acts on (docs/ci.md).

The per-row rule is results/decision.py; here it is applied across the rows of one call: each
row is held to its share of the family-wise false-alarm rate at its last look, incomplete sides
never pass, and every row says which reps it set aside, how noisy it is and why it stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jobbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION, UsageError
from jobbench.results.compare import COST_METRIC, METRICS
from jobbench.results.decision import Decision, Excluded, Rule, decide, evidence_from, look_alpha
from jobbench.results.model import Comparison, Gate, Row

VERDICTS = {"regression", "pass", "better", "inconclusive"}


@dataclass(frozen=True)
class GateConfig:
    metric: str | None = None  # None: each scenario's own (suite), else time to 99 %
    max_regression: float = 0.05  # a fraction: 0.05 = 5 % slower is still a pass
    # An autoscaled fleet's rows are also judged on their cost (worker-seconds), this much
    # more still a pass; None: latency alone.
    max_cost_regression: float | None = None

    def validate(self) -> GateConfig:
        if self.metric is not None and self.metric not in METRICS:
            raise UsageError(f"--metric {self.metric}: use one of {', '.join(METRICS)}")
        if not 0 < self.max_regression < 10:
            raise UsageError(f"--max-regression {self.max_regression:.1%}: use e.g. 5%")
        cost = self.max_cost_regression
        if cost is not None and not 0 < cost < 10:
            raise UsageError(f"--max-cost-regression {cost:.1%}: use e.g. 10%")
        return self

    def rule(self) -> Rule:
        return Rule(threshold=self.max_regression)


def parse_percent(text: str, flag: str = "--max-regression") -> float:
    """`5%`, `5` or `0.05` -> 0.05."""
    raw = text.strip().removesuffix("%")
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{flag} {text!r}: write a percentage like 5%") from None
    return value / 100 if text.strip().endswith("%") or value >= 1 else value


def judge(comparison: Comparison, gate: GateConfig) -> int:
    """Fill in verdicts (per row and overall) and return the exit code."""
    rule = gate.rule()
    rows = comparison.rows
    costed = [row for row in rows if _judged_on_cost(row, gate)]
    tests = len(rows) + len(costed)  # the family-wise rate is shared by every test made
    for row in rows:
        ev = evidence_from(row.metrics[row.gated])
        alpha = look_alpha(rule, tests, row.looks)
        decision = decide(ev, rule, alpha)
        row.verdict = "inconclusive" if decision.verdict == "unsettled" else decision.verdict
        row.reason = _reason(row, decision, ev.excluded, ev.spread, rule)
        row.alpha = alpha
        row.p_within = decision.p_within
        row.mdc = decision.mdc
    for row in costed:
        _judge_cost(row, gate, tests)
    overall, code, why = _overall(comparison)
    comparison.verdict = overall
    comparison.reason = why
    comparison.gate = Gate(
        metrics=sorted({row.gated for row in rows}),
        max_regression=rule.threshold,
        max_cost_regression=gate.max_cost_regression if costed else None,
        false_alarm=rule.false_alarm,
        miss=rule.miss,
    )
    return code


def _judged_on_cost(row: Row, gate: GateConfig) -> bool:
    return gate.max_cost_regression is not None and COST_METRIC in row.metrics


def _judge_cost(row: Row, gate: GateConfig, tests: int) -> None:
    """The row's cost verdict beside its latency one; the row's is the worse of the two (a
    regression in either fails it; either unsettled leaves it inconclusive)."""
    assert gate.max_cost_regression is not None
    rule = Rule(threshold=gate.max_cost_regression)
    ev = evidence_from(row.metrics[COST_METRIC])
    decision = decide(ev, rule, look_alpha(rule, tests, row.looks))
    cost = "inconclusive" if decision.verdict == "unsettled" else decision.verdict
    row.cost_verdict = cost
    change = "-" if ev.change is None else f"{ev.change:+.1%}"
    row.reason += f"; cost (worker-seconds, {rule.threshold:.0%} allowed): {cost}, {change}"
    for verdict in ("regression", "inconclusive"):  # else the latency's pass or better stands
        if verdict in (cost, row.verdict):
            row.verdict = verdict
            break


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
    faster = [row.scenario for row in rows if row.verdict == "better"]
    if slower and faster:  # still a regression: the gate fails on any row slower
        why = f"a trade: faster in {', '.join(faster)}; slower in {', '.join(slower)}"
        return "regression", EXIT_REGRESSION, why
    if slower:
        return "regression", EXIT_REGRESSION, f"slower in {', '.join(slower)}"
    if "inconclusive" in verdicts:
        open_rows = [r.scenario for r in rows if r.verdict == "inconclusive"]
        return "inconclusive", EXIT_INCONCLUSIVE, f"not settled: {', '.join(open_rows)}"
    return "pass", EXIT_OK, "no scenario is slower than the threshold"
