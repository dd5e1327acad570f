"""The gate's decision rule for one scenario row: which reps count, the change, and whether it is
settled (docs/ci.md, "The decision rule"). Pure: per-rep figures in, a typed decision out.

Per row, on the reps that count (runner-flagged and outlier reps are set aside, by name):
- **regression**: the Hodges-Lehmann change B/A - 1 is above the threshold *and* a one-sided
  Mann-Whitney test says B is slower at the significance of this look (`look_levels`: the test's
  share of the call's family-wise false-alarm rate, spent over the looks `--reps auto` takes);
- **pass**: the test that the change is below the threshold rejects at the miss rate (5 %), and
  the test that it is below twice the threshold rejects at this look's share of the miss rate
  (spent over the looks as the false-alarm rate is): a row whose true slowdown is twice the
  threshold or more passes with at most that chance, however many looks it takes;
- **better**: faster than the threshold and significant, like a regression the other way;
- otherwise **unsettled**: more reps would tell (`--reps auto` adds pairs), and at the end of the
  budget it is inconclusive, with the smallest change these reps could have shown.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import takewhile
from statistics import NormalDist
from typing import TYPE_CHECKING

from jobbench.measure import stats

if TYPE_CHECKING:  # the rule itself needs no documents (benchmarks/gate_error_rates.py)
    from jobbench.results.model import MetricComparison

# The correctness and behaviour checks a row is judged on before its speed (row_checks.py: how
# the jobs ended, the workers' behaviour, their CPU per job, the split, their requests per job)
# share a fifth of the call's false-alarm rate; the speed and cost tests keep the rest.
CHECKS_SHARE = 0.2
CHECKS_PER_ROW = 5
MIN_CLEAN_REPS = 3  # a side with fewer reps that count has no test at all
# `--reps auto` tests a row when its reps a side reach the next point of a geometric schedule
# (5, 7, 10, 13, 17, 23, 30 from 5), not after every pair: each test spends a share of the
# false-alarm rate that falls with its number (look_levels), so seven tests up to 30 reps
# leave the last one ten times the level that twenty-six tests would (a stall seen in 17 of 27
# reps against 2 was not significant at its 23rd look, docs/ci.md).
LOOK_GROWTH = 1.3
MAX_OUTLIER_SHARE = 0.25  # more outliers than this on a side: the side is unsteady, not judged


@dataclass(frozen=True)
class Rule:
    threshold: float = 0.05  # a slowdown up to this fraction still passes
    false_alarm: float = 0.01  # family-wise, per gate call over a whole suite
    miss: float = 0.05  # per test, over its looks: a slowdown of twice the threshold passed
    outlier_z: float = 3.5
    outlier_floor: float = 0.01  # no rep closer than 1 % to its side's median is an outlier


@dataclass(frozen=True)
class Excluded:
    side: str  # "A" or "B"
    rep: int  # 1-based, as the tables and the progress lines number reps
    value: float
    reason: str


@dataclass(frozen=True)
class Evidence:
    """What the reps of one metric say, before any threshold."""

    clean: tuple[tuple[float, ...], tuple[float, ...]]
    excluded: tuple[Excluded, ...]
    change: float | None  # B/A - 1, Hodges-Lehmann
    ci: tuple[float, float] | None  # 95 %
    p_slower: float | None  # one-sided: B slower than A
    p_faster: float | None
    spread: tuple[float | None, float | None]  # robust rep-to-rep noise per side
    unsteady: str | None  # why a side cannot be judged, if it cannot


@dataclass(frozen=True)
class Decision:
    verdict: str  # regression | pass | better | unsettled
    reason: str
    p_within: float | None  # one-sided: B is less than threshold slower than A
    mdc: float | None  # smallest slowdown flagged with 95 % power at these reps; None: none is


def sort_out(
    values: Sequence[float],
    flags: Sequence[str | None],
    side: str,
    rule: Rule,
    numbers: Sequence[int] | None = None,
    own: Sequence[bool] | None = None,
) -> tuple[list[float], list[Excluded]]:
    """Reps that count, and the ones set aside: runner-flagged first, then outliers among the
    rest (an outlier is judged against the reps nobody flagged). `numbers`: each value's rep
    number, from 1 (default: their order), where some reps have no value. `own[i]`: rep i
    showed the side's own behaviour (a stall). Then no rep of the side is an outlier: a stray
    disturbance is what the outlier rule sets aside, and here the spread is the side's doing
    (its stalled reps slow, the others not), which the verdict must weigh whole."""
    number = list(numbers) if numbers is not None else list(range(1, len(values) + 1))
    excluded = [
        Excluded(side, number[i], v, f)
        for i, (v, f) in enumerate(zip(values, flags))
        if f is not None
    ]
    unflagged = [(i, v) for i, (v, f) in enumerate(zip(values, flags)) if f is None]
    if len(unflagged) < MIN_CLEAN_REPS:
        return [v for _, v in unflagged], excluded
    if own is not None and any(own):
        return [v for _, v in unflagged], excluded
    marks = stats.outliers([v for _, v in unflagged], rule.outlier_z, rule.outlier_floor)
    mid = stats.median([v for _, v in unflagged])
    for (i, v), out in zip(unflagged, marks):
        if out:
            excluded.append(
                Excluded(side, number[i], v, f"outlier, {v / mid - 1:+.0%} off the median")
            )
    return [v for (_, v), out in zip(unflagged, marks) if not out], excluded


def weigh(
    base: Sequence[float],
    cand: Sequence[float],
    rule: Rule,
    flags: tuple[Sequence[str | None], Sequence[str | None]] | None = None,
    interval: bool = True,
    numbers: tuple[Sequence[int], Sequence[int]] | None = None,
    own: tuple[Sequence[bool], Sequence[bool]] | None = None,
) -> Evidence:
    """The evidence of one metric: `flags[side][i]` is why rep i was flagged by the runner.
    `interval=False` skips the confidence interval, which no decision needs (it is for the
    tables): settling a row after each pair, and the error-rate study, check thousands.
    `numbers[side][i]`: the rep number of value i, where some reps have none; `own[side][i]`:
    value i is of a rep that showed the side's own behaviour, never an outlier (sort_out)."""
    base_flags, cand_flags = flags or ([None] * len(base), [None] * len(cand))
    a, a_out = sort_out(
        base, base_flags, "A", rule, numbers[0] if numbers else None, own[0] if own else None
    )
    b, b_out = sort_out(
        cand, cand_flags, "B", rule, numbers[1] if numbers else None, own[1] if own else None
    )
    excluded = tuple(a_out + b_out)
    unsteady = _unsteady(len(base), len(cand), excluded)
    spread = (_spread(a), _spread(b))
    if min(len(a), len(b)) < MIN_CLEAN_REPS or min(a + b) <= 0:
        return Evidence((tuple(a), tuple(b)), excluded, None, None, None, None, spread, unsteady)
    if interval:
        estimate, low, high = stats.log_shift(a, b)
        ci: tuple[float, float] | None = (math.expm1(low), math.expm1(high))
    else:
        estimate, ci = stats.log_ratio_estimate(a, b), None
    return Evidence(
        (tuple(a), tuple(b)),
        excluded,
        math.expm1(estimate),
        ci,
        stats.mann_whitney_p(b, a, "greater"),
        stats.mann_whitney_p(b, a, "less"),
        spread,
        unsteady,
    )


def evidence_from(metric: MetricComparison) -> Evidence:
    """The Evidence a comparison row stores (comparison.compare_metric), read back."""
    clean, spread, ci = metric.clean, metric.spread, metric.ci
    return Evidence(
        (tuple(clean.baseline), tuple(clean.candidate)) if clean else ((), ()),
        tuple(Excluded(e.side, e.rep, e.value, e.reason) for e in metric.excluded),
        metric.change,
        (ci[0], ci[1]) if ci else None,
        metric.p_slower,
        metric.p_faster,
        (spread.baseline, spread.candidate) if spread else (None, None),
        metric.unsteady,
    )


def _spread(values: Sequence[float]) -> float | None:
    return stats.robust_spread(values) if values and min(values) > 0 else None


def _unsteady(n_a: int, n_b: int, excluded: Sequence[Excluded]) -> str | None:
    for side, n in (("A", n_a), ("B", n_b)):
        outliers = sum(1 for e in excluded if e.side == side and e.reason.startswith("outlier"))
        if n and outliers > MAX_OUTLIER_SHARE * n:
            return f"{side} is unsteady: {outliers} of its {n} reps are outliers"
    return None


@dataclass(frozen=True)
class Levels:
    """The significance levels of one look at one row (look_levels)."""

    alpha: float  # of the regression and better tests: a share of the false-alarm rate
    miss: float  # of the pass test's bound at twice the threshold: a share of the miss rate
    checks: float  # of each correctness and behaviour check (verdict/row_checks.py)


def look_points(first_reps: int) -> Iterator[int]:
    """The reps a side at which `--reps auto` tests a row: its first reps, then each point at
    least two pairs and LOOK_GROWTH times past the one before."""
    reps = first_reps
    while True:
        yield reps
        reps = max(reps + 2, math.ceil(reps * LOOK_GROWTH))


def look_number(reps: int, first_reps: int) -> int:
    """The number of the test taken at `reps` reps a side: its place in the schedule, or, for a
    row stopped between two points (`--max-reps`, its share of `--budget`), the next point's, so
    no two tests of a row share a number."""
    if reps < 1 or first_reps < 1:
        raise ValueError(f"look_number: reps {reps}, first reps {first_reps}")
    for number, point in enumerate(look_points(first_reps), 1):
        if reps <= point:
            return number
    raise AssertionError("look_points never ends")


def is_look_point(reps: int, first_reps: int) -> bool:
    return reps in takewhile(lambda point: point <= reps, look_points(first_reps))


def look_levels(rule: Rule, look: int, *, rows: int, costed: int) -> Levels:
    """The levels of a row's `look`-th test (look_number: 1 at its first reps, then one per
    point of the schedule `--reps auto` reaches) in a call of `rows` rows, `costed` of which
    are judged on their cost too. The call's family-wise false-alarm rate is shared by every
    test it makes: the speed and cost tests (rows + costed, Bonferroni) four fifths of it, each
    row's checks (CHECKS_PER_ROW) the rest, and each test spends its share over its looks as share /
    (look (look + 1)); the pass test's bound at twice the threshold spends the miss rate the
    same way. The looks of a test sum to at most its share however long the row runs (1/2 +
    1/6 + ... = 1), so adding reps until something is significant inflates neither rate. The
    settling loop (core/run/settle.py) and the verdict (gate.judge) both take their levels from
    here: a row stops at the levels it is judged at."""
    if rows < 1 or not 0 <= costed <= rows or look < 1:
        raise ValueError(f"look_levels: rows {rows}, costed {costed}, look {look}")
    spend = look * (look + 1)
    speed = rule.false_alarm * (1 - CHECKS_SHARE)
    checks = rule.false_alarm * CHECKS_SHARE / (rows * CHECKS_PER_ROW)
    return Levels(speed / (rows + costed) / spend, rule.miss / spend, checks / spend)


def decide(evidence: Evidence, rule: Rule, levels: Levels) -> Decision:
    """The row's verdict at the levels of its last look (look_levels); the detectable change is
    quoted at the same significance."""
    a, b = evidence.clean
    if evidence.change is None or evidence.p_slower is None or evidence.p_faster is None:
        why = f"only {len(a)} A and {len(b)} B reps count (a test needs {MIN_CLEAN_REPS} a side)"
        return Decision("unsettled", why, None, None)
    change, limit, alpha = evidence.change, rule.threshold, levels.alpha
    shifted = [v / (1 + limit) for v in b]
    p_within = stats.mann_whitney_p(shifted, a, "less")
    mdc = minimum_detectable(a, b, rule, alpha)
    if evidence.unsteady:
        return Decision("unsettled", evidence.unsteady, p_within, mdc)
    if len(set(a)) == 1 and len(set(b)) == 1:  # a deterministic target: p is 0 or 1
        verdict = "regression" if change > limit else "better" if change < -limit else "pass"
        why = f"{change:+.1%}, exactly: every rep of each side the same (no rep-to-rep noise)"
        return Decision(verdict, why, p_within, mdc)
    if change > limit and evidence.p_slower < alpha:
        why = f"{change:+.1%} > +{limit:.0%}, B slower at p = {evidence.p_slower:.2g} < {alpha:.2g}"
        return Decision("regression", why, p_within, mdc)
    if change < -limit and evidence.p_faster < alpha:
        why = f"{change:+.1%}, B faster at p = {evidence.p_faster:.2g}"
        return Decision("better", why, p_within, mdc)
    if p_within < rule.miss:
        return _bounded(a, b, change, rule, levels, p_within, mdc)
    if change > limit:
        why = f"{change:+.1%} > +{limit:.0%} but not yet significant (p = {evidence.p_slower:.2g})"
    else:
        why = f"{change:+.1%}, but a slowdown over +{limit:.0%} is not ruled out"
    return Decision("unsettled", why, p_within, mdc)


def _bounded(
    a: Sequence[float],
    b: Sequence[float],
    change: float,
    rule: Rule,
    levels: Levels,
    p_within: float,
    mdc: float | None,
) -> Decision:
    """A row within the threshold at the miss rate passes once a slowdown of twice the threshold
    is ruled out at this look's share of it. The first test alone, repeated at 5 % after every
    pair, would let the chance of passing a real slowdown grow with the looks; the second is
    spent, so over all looks a slowdown of twice the threshold (where the miss rate is defined)
    passes with at most 5 %, whatever the noise. Spending the first test's level instead left
    a no-change noisy row inconclusive in 3 calls of 10 (docs/ci.md)."""
    limit, beyond = rule.threshold, 2 * rule.threshold
    p_beyond = stats.mann_whitney_p([v / (1 + beyond) for v in b], a, "less")
    within = f"{change:+.1%}: below +{limit:.0%} (p = {p_within:.2g} < {rule.miss:.0%})"
    if p_beyond < levels.miss:
        why = f"{within}, +{beyond:.0%} ruled out (p = {p_beyond:.2g} < {levels.miss:.2g})"
        return Decision("pass", why, p_within, mdc)
    why = f"{within}, but +{beyond:.0%} not yet ruled out (p = {p_beyond:.2g} >= {levels.miss:.2g})"
    return Decision("unsettled", why, p_within, mdc)


def minimum_detectable(
    a: Sequence[float], b: Sequence[float], rule: Rule, alpha: float
) -> float | None:
    """The smallest true slowdown these reps flag with 95 % power (normal approximation of the
    rank test: log-scale robust sd, x sqrt(pi / 3) for Mann-Whitney's efficiency); None when
    the exact test cannot reach `alpha` at these sizes at all."""
    if stats.min_p(len(a), len(b)) >= alpha:
        return None
    sd = math.sqrt((_log_sd(a) ** 2 + _log_sd(b) ** 2) / 2)
    se = sd * math.sqrt(1 / len(a) + 1 / len(b)) * math.sqrt(math.pi / 3)
    z = NormalDist().inv_cdf
    power = z(1 - rule.miss)
    needed = max(math.log1p(rule.threshold) + power * se, (z(1 - alpha) + power) * se)
    return math.expm1(needed)


def _log_sd(values: Sequence[float]) -> float:
    logs = [math.log(v) for v in values]
    mid = stats.median(logs)
    return stats.MAD_TO_SD * stats.median([abs(v - mid) for v in logs])
