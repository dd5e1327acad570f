"""The comparison document, schema `jobbench.comparison/2` (reports/README.md), and the
`jobbench.comparison/1` files written before the gate's decision rule, which `jobbench report`
still reads: one model for both, the fields only one of them has being those with a default
(model_base.py), so a /1 file reads and writes back as the /1 file it was.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from jobbench.results.model_base import Doc, Number, PerSide
from jobbench.results.model_result import LatencyValue

COMPARISON_SCHEMA: Final = "jobbench.comparison/2"
READABLE_COMPARISON_SCHEMAS = ("jobbench.comparison/1", COMPARISON_SCHEMA)
DEFAULT_METRIC = "time_to_p99_s"  # the gated metric, and the only one /1 gated on


class SideSummary(Doc):
    """The comparison's `baseline` or `candidate` block: which result a side was, as the
    comparison saw it (its figures are in each row)."""

    label: str
    path: str | None = None  # the result file, relative to the comparison's folder
    created: str | None
    complete: bool
    error: str | None = None  # absent in /1
    workers: list[str]
    # How the call named the side for people (`base abc1234 (merge base)`); absent: its label.
    name: str | None = None


class SideFigure(Doc):
    """A side's figure over the reps that count (/1: over every rep)."""

    median: Number
    min: Number
    max: Number
    n: int
    pooled: Number | None = None  # a pooled metric: over every job of those reps


class ExcludedRep(Doc):
    side: str  # "A" or "B"
    rep: int  # from 1
    value: Number
    reason: str


class MetricComparison(Doc):
    baseline: SideFigure | None
    candidate: SideFigure | None
    change: Number | None  # /2: Hodges-Lehmann B/A - 1; /1: ratio of medians - 1
    p_value: Number | None = None  # /1 only: two-sided Mann-Whitney
    ci: list[Number] | None  # [low, high], 95 %
    p_slower: Number | None = None  # /2 from here on
    p_faster: Number | None = None
    spread: PerSide[Number | None] | None = None
    excluded: list[ExcludedRep] = Field(default_factory=list)
    clean: PerSide[list[Number]] | None = None
    unsteady: str | None = None
    values: PerSide[list[Number | None]]


class JobOutcomes(Doc):
    """How a side's jobs ended over the row's reps (results/correctness.py): submitted,
    completed, and each bad way that happened (failed, timed_out, cancelled, lost, unfinished,
    doubled); `faulted`: faults were injected on purpose."""

    jobs: int
    completed: int
    bad: dict[str, int]
    faulted: bool = False


class HeldFigure(Doc):
    """One figure of take-ahead's cost on each side, the median over its reps (the summary's);
    `difference`: B - A, since a side that takes no jobs ahead holds none (a ratio would divide
    by 0). None: the side's reps lack it (a file from before commit dba92ff, or no job was held)."""

    baseline: Number | None
    candidate: Number | None
    difference: Number | None


class HeldComparison(Doc):
    """Jobs held in a take-ahead buffer while a slot was free elsewhere, and their extra wait
    (results/model_result.py HeldCost): a cost shown beside the gated metric, never gated."""

    jobs: HeldFigure
    extra_wait_p99_s: HeldFigure


class RowParams(Doc):
    """The scenario's params both sides share: without the variants' own."""

    workers: int | None
    slots: int | None
    burst: int
    job_seconds: Number
    latency: dict[str, LatencyValue] | None  # without the latency fields a variant sets
    submit_rate: str | None = None  # live only
    inputs: int | None = None  # the user's job inputs (--input, --inputs); None: jobbench's


class Row(Doc):
    scenario: str
    params: RowParams
    ideal_s: Number | None
    efficiency: PerSide[Number | None]
    split: PerSide[list[int]]  # jobs per worker in the last rep, most first
    reps: PerSide[int] | None = None  # absent in /1
    metric: str | None = None  # the one the verdict rests on; absent in /1 (see `gated`)
    metrics: dict[str, MetricComparison]
    outcomes: PerSide[JobOutcomes] | None = None  # absent before correctness was judged
    # What each side's own processes did, by kind: reps showing it (results/behaviour.py).
    behaviour: PerSide[dict[str, int]] | None = None
    held: HeldComparison | None = None  # absent before it, and when neither side measured it
    verdict: str | None  # None until gate.judge; better | pass | regression | inconclusive
    cost_verdict: str | None = None  # an autoscaled row judged on its cost too (gate.py)
    # set by the compare command, then by gate.judge:
    stopped: str | None = None
    looks: int = 1
    reason: str = ""
    alpha: Number | None = None
    # The first correctness or behaviour finding that made the row a regression (row_checks.py)
    broke: str | None = None
    p_within: Number | None = None
    mdc: Number | None = None

    @property
    def gated(self) -> str:
        """The metric the verdict rests on (a /1 row: time to 99 %, what /1 gated on)."""
        return self.metric or DEFAULT_METRIC


class Gate(Doc):
    """The rule a comparison was judged by."""

    metric: str | None = None  # /1
    metrics: list[str] | None = None  # /2
    max_regression: Number
    max_cost_regression: Number | None = None  # autoscaled rows' cost, when gated on it
    false_alarm: Number | None = None  # /2
    miss: Number | None = None  # /2
    significance: Number | None = None  # /1


class Comparison(Doc):
    schema_: Literal["jobbench.comparison/1", "jobbench.comparison/2"] = Field(alias="schema")
    baseline: SideSummary
    candidate: SideSummary
    rows: list[Row]
    verdict: str | None  # None until gate.judge
    reason: str = ""  # absent until judged, and in /1
    wall_s: Number | None = None  # how long the call that made it took; absent: not known
    gate: Gate | None = None  # absent until judged
