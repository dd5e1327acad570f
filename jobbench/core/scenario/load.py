"""The Load seam: when a rep's jobs are submitted. Today the atomic burst; arrival profiles
are further kinds of Load, and each Target applies whatever waves a Load gives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Wave:
    """`jobs` submitted at once, `at_s` seconds after the rep's first submission."""

    at_s: float
    jobs: int


class Load(Protocol):
    @property
    def jobs(self) -> int:
        """Every job of one rep: the rep ends when all of them are terminal."""
        ...

    @property
    def warmup_s(self) -> float | None:
        """Where the steady part starts, when the load sets it (None: detected)."""
        ...

    def waves(self) -> tuple[Wave, ...]: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class Burst:
    """Every job of the rep in one submission: the reference table's load."""

    jobs: int
    warmup_s: None = None  # a burst has no steady part

    def waves(self) -> tuple[Wave, ...]:
        return (Wave(0.0, self.jobs),)

    def describe(self) -> str:
        return f"burst of {self.jobs}"
