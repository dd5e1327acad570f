"""Why each row of a comparison took no more reps, and the look its last test was: what the
settling loop found (core/run/settle.py) or what the call says of every row (fixed reps, a
saved side), handed to the comparison as it is built (comparison.compare_docs), which records
it in each row; gate.judge holds a row to its last look's levels and says why it stopped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Stops:
    """Per row by scenario name: why it stopped (`reasons`) and the look_number of its last
    test (`looks`); a row absent from either stopped for `otherwise` after one look."""

    reasons: Mapping[str, str] = field(default_factory=dict)
    looks: Mapping[str, int] = field(default_factory=dict)
    otherwise: str = ""

    def reason(self, scenario: str) -> str:
        return self.reasons.get(scenario, self.otherwise)

    def look(self, scenario: str) -> int:
        return self.looks.get(scenario, 1)

    def stopped_as(self, scenario: str, reason: str) -> Stops:
        """The same, with `scenario` stopped for `reason` (its look kept)."""
        return replace(self, reasons={**self.reasons, scenario: reason})
