"""`--reps auto`: after a row's first reps, keep adding interleaved A/B pairs while the row is
unsettled, within `--max-reps` and a fair share of `--budget` (docs/ci.md, "Settle, don't
shrug"). Each row records why it stopped."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from jobbench.core.checks import check_positive_int
from jobbench.errors import UsageError

if TYPE_CHECKING:  # the statistics load only when a row is judged: the CLI imports this module
    from jobbench.results.decision import Rule
    from jobbench.results.model import ScenarioResult

AUTO = "auto"
DEFAULT_MAX_REPS = 30
DEFAULT_BUDGET_S = 45 * 60.0  # the real SDK seed suite settles a regression on every row in ~21 min
_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


class Messages(Protocol):
    def message(self, text: str) -> None: ...


def parse_reps(text: str) -> int | str:
    """`--reps auto` or a whole number >= 1."""
    if text.strip().lower() == AUTO:
        return AUTO
    try:
        reps = int(text)
    except ValueError:
        raise UsageError(f"--reps {text!r}: write a whole number, e.g. 5, or auto") from None
    check_positive_int("--reps", reps, "or auto")
    return reps


def parse_duration(text: str, flag: str = "--budget") -> float:
    """`30m`, `1h`, `90s` or plain seconds -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*", text)
    if not match or float(match[1]) <= 0:
        raise UsageError(f"{flag} {text!r}: write a duration like 30m, 1h or 600s")
    return float(match[1]) * _UNITS[match[2] or "s"]


@dataclass
class Settler:
    """Asked after every pair of a row once its first reps ran: stop, or one more pair?"""

    rule: Rule
    metric_for: Callable[[str], str | None]
    rows: int
    first_reps: int
    messages: Messages
    max_reps: int = DEFAULT_MAX_REPS
    budget_s: float = DEFAULT_BUDGET_S
    started: float = field(default_factory=time.monotonic)
    stopped: dict[str, str] = field(default_factory=dict)
    looks: dict[str, int] = field(default_factory=dict)  # per row: tests taken, for its alpha
    _begun: int = 0

    def begin_row(self) -> float:
        """The deadline of the row about to start: an equal share of the budget left."""
        left = max(1, self.rows - self._begun)
        self._begun += 1
        now = time.monotonic()
        return now + max(0.0, self.started + self.budget_s - now) / left

    def stop(
        self, entries: list[ScenarioResult], reps: int, pair_s: float, deadline: float
    ) -> str | None:
        """Why the row stops here, or None for one more pair (A then B)."""
        from jobbench.results.compare import compare_metric, gated_metric
        from jobbench.results.decision import decide, evidence_from, look_alpha
        from jobbench.results.row_checks import judge_entries, worst

        name = entries[0].name
        metric = gated_metric(self.metric_for(name), entries[0])
        row = compare_metric((entries[0], entries[1]), metric, ("A", "B"), True, self.rule)
        look = reps - self.first_reps + 1
        self.looks[name] = look
        decision = decide(evidence_from(row), self.rule, look_alpha(self.rule, self.rows, look))
        # Correctness and behaviour first: a candidate that broke something is settled, and
        # one that may have (seen, not yet sure) gets more reps like an unsettled speed.
        found = worst(judge_entries((entries[0], entries[1]), self.rule, self.rows, look))
        if found == "regression":
            reason = f"settled (regression: correctness or behaviour) after {reps} reps a side"
        elif decision.verdict != "unsettled" and found is None:
            reason = f"settled ({decision.verdict}) after {reps} reps a side"
        elif reps >= self.max_reps:
            reason = f"--max-reps {self.max_reps} reached"
        elif time.monotonic() + pair_s > deadline:
            reason = (
                f"its share of --budget {self.budget_s / 60:.0f} min was spent after {reps} reps"
            )
        else:
            why = decision.reason if found is None else "a behaviour seen, not yet sure"
            self.messages.message(f"{name}: unsettled after {reps} reps a side "
                                  f"({why}); one more pair")  # fmt: skip
            return None
        self.stopped[name] = reason
        return reason
