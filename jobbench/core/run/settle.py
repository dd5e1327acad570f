"""`--reps auto`: after a row's first reps, keep adding interleaved A/B pairs while the row is
unsettled, within `--max-reps` and a fair share of `--budget` (docs/ci.md, "Settle, don't
shrug"), and until a row settles as a regression, which decides the call. A row judged on its
cost too is unsettled until its cost is settled as well. Each row records why it stopped."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from jobbench.core.scenario.checks import whole_or_auto
from jobbench.errors import UsageError
from jobbench.verdict.stops import Stops

if TYPE_CHECKING:  # the statistics load only when a row is judged: the CLI imports this module
    from jobbench.results.model import ScenarioResult
    from jobbench.verdict.gate import GateConfig

AUTO = "auto"  # --reps auto: settle each row (scenario/checks.py reads the word)
DEFAULT_MAX_REPS = 30
DEFAULT_BUDGET_S = 45 * 60.0  # the real SDK seed suite settles a regression on every row in ~21 min
_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


class Messages(Protocol):
    def message(self, text: str) -> None: ...


def parse_reps(text: str) -> int | str:
    """`--reps auto` or a whole number >= 1."""
    return whole_or_auto("--reps", text, 5)


def parse_duration(text: str, flag: str = "--budget") -> float:
    """`30m`, `1h`, `90s` or plain seconds -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*", text)
    if not match or float(match[1]) <= 0:
        raise UsageError(f"{flag} {text!r}: write a duration like 30m, 1h or 600s")
    return float(match[1]) * _UNITS[match[2] or "s"]


@dataclass
class Settler:
    """Asked after every pair of a row once its first reps ran: stop, or one more pair? The row
    is tested at the schedule's points (decision.look_points) and when it must stop; each
    test is held to the levels gate.judge holds it to (decision.look_levels over the same
    `rows` and `costed` tests), so the row's last look here is the verdict there."""

    gate: GateConfig
    metric_for: Callable[[str], str | None]
    rows: int
    costed: int  # rows also judged on their cost (GateConfig.judges_cost): more tests
    first_reps: int
    messages: Messages
    max_reps: int = DEFAULT_MAX_REPS
    budget_s: float = DEFAULT_BUDGET_S
    started: float = field(default_factory=time.monotonic)
    stopped: dict[str, str] = field(default_factory=dict)
    looks: dict[str, int] = field(default_factory=dict)  # per row, the look_number of its last test
    # The first row settled as a regression: the call is one whatever the others would show,
    # so they add no more pairs (rows in lanes stop at their next test).
    regressed: str | None = None
    _begun: int = 0

    def begin_row(self, lanes: int = 1) -> float:
        """The deadline of the row about to start: an equal share of the budget left, where the
        rows left run `lanes` at a time (core/run/lanes.py), so in that many fewer turns."""
        left = max(1, self.rows - self._begun)
        self._begun += 1
        now = time.monotonic()
        turns = -(-left // max(1, lanes))
        return now + max(0.0, self.started + self.budget_s - now) / turns

    def stop(
        self, entries: list[ScenarioResult], reps: int, pair_s: float, deadline: float
    ) -> str | None:
        """Why the row stops here, or None for one more pair (A then B)."""
        from jobbench.verdict.decision import is_look_point, look_number, look_points

        name = entries[0].name
        if reps >= self.max_reps:
            last = f"--max-reps {self.max_reps} reached"
        elif time.monotonic() + pair_s > deadline:
            last = f"its share of --budget {self.budget_s / 60:.0f} min was spent after {reps} reps"
        elif self.regressed is not None:
            last = f"{self.regressed} settled the call as a regression after {reps} reps a side"
        elif not is_look_point(reps, self.first_reps):
            return None  # between two tests of the schedule: no test, one more pair
        else:
            last = None
        look = look_number(reps, self.first_reps)
        self.looks[name] = look
        verdict, why = self._decide(entries, look)
        if verdict == "regression" and self.regressed is None:
            self.regressed = name
        if verdict != "unsettled":
            reason = f"settled ({verdict}) after {reps} reps a side"
        elif last is not None:
            reason = last
        else:
            point = next(p for p in look_points(self.first_reps) if p > reps)
            self.messages.message(f"{name}: unsettled after {reps} reps a side ({why}); "
                                  f"next test at {point} reps")  # fmt: skip
            return None
        self.stopped[name] = reason
        return reason

    def settled(self, otherwise: str = "") -> Stops:
        """What the loop found, for the comparison to be built from: each row's reason and
        last look; `otherwise`, the reason of a row it never stopped (its run cut short)."""
        return Stops(dict(self.stopped), dict(self.looks), otherwise)

    def _decide(self, entries: list[ScenarioResult], look: int) -> tuple[str, str]:
        """The row's decision at this look, and why: its latency's, or with its cost's when
        the row is judged on cost too (gate.costed_verdict)."""
        from jobbench.results.rep_metrics import COST_METRIC
        from jobbench.verdict.comparison import compare_metric, gated_metric, is_autoscaled
        from jobbench.verdict.decision import decide, evidence_from, look_levels
        from jobbench.verdict.gate import costed_verdict
        from jobbench.verdict.row_checks import checked_verdict, judge_entries, worst

        pair = (entries[0], entries[1])
        rule = self.gate.rule()
        levels = look_levels(rule, look, rows=self.rows, costed=self.costed)
        # Correctness and behaviour first (row_checks.py), as gate.judge takes them: a
        # candidate that broke something is settled; one that may have (a behaviour seen, not
        # yet sure) gets more reps like an unsettled speed, unless its speed is a regression
        # already, which the verdict would say whatever more reps showed of the behaviour.
        findings = judge_entries(pair, rule, levels.checks)
        found = worst(findings)
        if found == "regression":
            return found, next(f.reason for f in findings if f.verdict == found)
        metric = gated_metric(self.metric_for(entries[0].name), entries[0])
        gated = compare_metric(pair, metric, ("A", "B"), True, rule)
        latency = decide(evidence_from(gated), rule, levels)
        verdict, why = latency.verdict, latency.reason
        cost_rule = self.gate.cost_rule()
        if cost_rule is not None and self.gate.judges_cost(is_autoscaled(entries[0])):
            # As compare_docs weighs it: not required (a rep without the figure leaves it open).
            figures = compare_metric(pair, COST_METRIC, ("A", "B"), False, rule)
            cost = decide(evidence_from(figures), cost_rule, levels)
            verdict, why = costed_verdict(verdict, cost.verdict), f"{why}; cost: {cost.reason}"
        decided = checked_verdict(found, verdict)
        if decided == "unsettled" and found == "inconclusive":
            why = next(f.reason for f in findings if f.verdict == found)
        return decided, why
