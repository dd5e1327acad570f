"""Comparison -> verdicts per row and overall, with the exit code CI acts on (docs/ci.md).

The per-row rule is verdict/decision.py; here it is applied across the rows of one call: each
row is held to its share of the family-wise false-alarm rate at its last look, incomplete sides
never pass, and every row says which reps it set aside, how noisy it is and why it stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jobbench.errors import (
    EXIT_INCONCLUSIVE,
    EXIT_OK,
    EXIT_REGRESSION,
    EXIT_RUN_FAILED,
    UsageError,
)
from jobbench.results.model import Comparison, Gate, Row
from jobbench.results.rep_metrics import COST_METRIC, METRICS
from jobbench.verdict.decision import (
    Decision,
    Excluded,
    Levels,
    Rule,
    decide,
    evidence_from,
    look_levels,
)
from jobbench.verdict.row_checks import checked_verdict, judge_checks, worst

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

    def cost_rule(self) -> Rule | None:
        """The rule a row's cost is judged by; None: cost is not gated."""
        cost = self.max_cost_regression
        return None if cost is None else Rule(threshold=cost)

    def judges_cost(self, autoscaled: bool) -> bool:
        """A row is judged on its cost too when it ran an autoscaled fleet (the only rows with
        a cost, COST_METRIC) and --max-cost-regression is given."""
        return autoscaled and self.max_cost_regression is not None


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
    costed = sum(gate.judges_cost(COST_METRIC in row.metrics) for row in rows)
    for row in rows:
        levels = look_levels(rule, row.looks, rows=len(rows), costed=costed)
        ev = evidence_from(row.metrics[row.gated])
        decision = decide(ev, rule, levels)
        row.verdict = _word(decision.verdict)
        row.reason = _reason(row, decision, ev.excluded, ev.spread, rule)
        row.alpha = levels.alpha
        row.p_within = decision.p_within
        row.mdc = decision.mdc
        if gate.judges_cost(COST_METRIC in row.metrics):
            _judge_cost(row, gate, decision.verdict, levels)
        _judge_checks(row, levels)
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


def _judge_cost(row: Row, gate: GateConfig, latency: str, levels: Levels) -> None:
    """The row's cost verdict beside its latency one, at the same look's levels; the row's is
    the worse of the two (costed_verdict)."""
    rule = gate.cost_rule()
    assert rule is not None
    ev = evidence_from(row.metrics[COST_METRIC])
    decision = decide(ev, rule, levels)
    row.cost_verdict = _word(decision.verdict)
    change = "-" if ev.change is None else f"{ev.change:+.1%}"
    row.reason += (
        f"; cost (worker-seconds, {rule.threshold:.0%} allowed): {row.cost_verdict}, {change}"
    )
    row.verdict = _word(costed_verdict(latency, decision.verdict))


def call_exit(code: int, cut_short: bool, gating: bool) -> int:
    """A compare or gate call's exit code from its verdict's (`judge`): a gate (`gating`, or
    compare --fail-on-regression) exits with it, a plain compare 0. When B's own workers ended
    its run (`cut_short`), a gate's regression stands (its rows name what the workers did);
    anything short of that, or a plain compare, is a run that could not finish: never a pass."""
    if cut_short and not (gating and code == EXIT_REGRESSION):
        return EXIT_RUN_FAILED
    return code if gating else EXIT_OK


def costed_verdict(latency: str, cost: str) -> str:
    """A row's decision from its latency's and its cost's (decision.py's words): a regression
    in either fails it, either unsettled leaves it unsettled, else the latency's pass or better
    stands. The settling loop stops a costed row once this is settled."""
    for verdict in ("regression", "unsettled"):
        if verdict in (latency, cost):
            return verdict
    return latency


def _word(decision: str) -> str:
    """A decision as a verdict: unsettled at the last look is inconclusive."""
    return "inconclusive" if decision == "unsettled" else decision


def _judge_checks(row: Row, levels: Levels) -> None:
    """Correctness and behaviour before speed (row_checks.py): a finding that is a regression
    or inconclusive overrides the row's speed verdict, unless that is already as bad, and its
    reason comes first."""
    findings = judge_checks(row, levels.checks)
    if not findings:
        return
    verdict = worst(findings)
    assert row.verdict is not None  # judge sets the speed's (and cost's) verdict first
    row.verdict = _word(checked_verdict(verdict, row.verdict))
    if verdict == "regression":
        row.broke = next(f.reason for f in findings if f.verdict == "regression")
    row.reason = "; ".join([*(f.reason for f in findings), row.reason])


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
    broke = [f"{row.scenario} ({row.broke})" for row in rows if row.broke]
    if incomplete and broke:  # what the candidate broke stays broken, however the run ended
        return (
            "regression",
            EXIT_REGRESSION,
            f"broke in {', '.join(broke)}; " + "; ".join(incomplete),
        )
    if incomplete:  # never a pass, whatever the rows that did run say
        found = f"; regression so far in {', '.join(slower)}" if slower else ""
        return "inconclusive", EXIT_INCONCLUSIVE, "; ".join(incomplete) + found
    if slower:
        # What broke (correctness, behaviour) first; then speed, as a trade where other rows
        # are faster. Still a regression either way: the gate fails on any row slower.
        speed = [row.scenario for row in rows if row.verdict == "regression" and not row.broke]
        faster = [row.scenario for row in rows if row.verdict == "better"]
        said = [f"broke in {', '.join(broke)}"] if broke else []
        if speed and faster:
            said.append(f"a trade: faster in {', '.join(faster)}; slower in {', '.join(speed)}")
        elif speed:
            said.append(f"slower in {', '.join(speed)}")
        return "regression", EXIT_REGRESSION, "; ".join(said)
    if "inconclusive" in verdicts:
        open_rows = [r.scenario for r in rows if r.verdict == "inconclusive"]
        return "inconclusive", EXIT_INCONCLUSIVE, f"not settled: {', '.join(open_rows)}"
    return "pass", EXIT_OK, "no scenario is slower than the threshold"
