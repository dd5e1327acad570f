"""How every job of a side ended, and the rule that judges it before speed (docs/ci.md,
"Correctness first").

A job that did not complete is not fast work: a candidate that fails, loses, times out or runs
jobs twice is a regression whatever its times say. Where the baseline ended no job badly and no
fault was injected, one bad job is enough; where faults are injected (or the baseline has bad
jobs too), the two sides' shares are compared with a one-sided Fisher exact test at the row's
significance, so injected faults that hit both sides alike are not a regression.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobbench.results.model import JobOutcomes, Jobs, Result, ScenarioResult

# Each way a job can end badly, as the result's `jobs` block counts it, in the order a reason
# names them. `unfinished` is what was still queued or running when the rep ended, less the
# jobs a worker lost (counted as lost); `doubled` jobs completed but ran twice.
BAD_OUTCOMES = ("failed", "timed_out", "cancelled", "lost", "unfinished", "doubled")
WORDS = {
    "failed": "failed",
    "timed_out": "timed out",
    "cancelled": "were cancelled",
    "lost": "were lost",
    "unfinished": "did not finish",
    "doubled": "ran twice",
}


def bad_jobs(side: JobOutcomes) -> int:
    return sum(side.bad.values())


def describe(side: JobOutcomes) -> str:
    """`6 of 64 jobs failed`, `5 of 320 jobs ended badly (3 failed, 2 were lost)`."""
    if not side.bad:
        return f"0 of {side.jobs} jobs ended badly"
    if len(side.bad) == 1:
        (way, n), *_ = side.bad.items()
        return f"{n} of {side.jobs} jobs {WORDS[way]}"
    ways = ", ".join(f"{n} {WORDS[way]}" for way, n in side.bad.items())
    return f"{bad_jobs(side)} of {side.jobs} jobs ended badly ({ways})"


def rep_bad(jobs: Jobs) -> dict[str, int]:
    """One rep's bad endings by way (zeros left out). Cancellations jobbench made itself (a
    live rep cut short) are not the worker's doing."""
    lost = jobs.lost or 0
    counts = {
        "failed": jobs.failed,
        "timed_out": jobs.timed_out,
        "cancelled": jobs.cancelled - (jobs.cancelled_by_jobbench or 0),
        "lost": lost,
        "unfinished": max(jobs.unfinished - lost, 0),
        "doubled": jobs.doubled or 0,
    }
    return {way: n for way, n in counts.items() if n > 0}


def side_outcomes(entry: ScenarioResult) -> JobOutcomes:
    """Every rep of the side counts: a job that ended badly in a rep set aside for its speed
    (a disturbed measurement) still ended badly."""
    totals = dict.fromkeys(BAD_OUTCOMES, 0)
    for rep in entry.reps:
        for way, n in rep_bad(rep.jobs).items():
            totals[way] += n
    return JobOutcomes(
        jobs=sum(rep.jobs.submitted for rep in entry.reps),
        completed=sum(rep.jobs.completed for rep in entry.reps),
        bad={way: n for way, n in totals.items() if n},
        faulted=bool(entry.params.faults or entry.params.worker_faults),
    )


def over_fail_limit(doc: Result, limit: float) -> str | None:
    """A run's own check (`jobbench run --max-fail-ratio`): the first scenario that ended more
    of its jobs badly than the share `limit` allows, said in one line, or None."""
    for entry in doc.scenarios:
        side = side_outcomes(entry)
        if side.jobs and bad_jobs(side) / side.jobs > limit:
            share = bad_jobs(side) / side.jobs
            return f"{entry.name}: {describe(side)} ({share:.1%}), over --max-fail-ratio {limit:g}"
    return None


@dataclass(frozen=True)
class CorrectnessCheck:
    regression: bool
    reason: str  # said in the row's reason either way when either side ended jobs badly
    p: float | None  # the Fisher test's, where the counts were tested


def judge_correctness(
    base: JobOutcomes, cand: JobOutcomes, alpha: float
) -> CorrectnessCheck | None:
    """None when neither side ended a job badly (nothing to say)."""
    if not base.bad and not cand.bad:
        return None
    said = f"correctness: {describe(cand)}, baseline {_short(base)}"
    if not cand.bad:
        return CorrectnessCheck(False, said, None)
    if not base.bad and not (base.faulted or cand.faulted):
        return CorrectnessCheck(True, said, None)
    table = [
        [bad_jobs(cand), cand.jobs - bad_jobs(cand)],
        [bad_jobs(base), base.jobs - bad_jobs(base)],
    ]
    # Deferred: scipy.stats costs ~0.7 s to import, and every command imports this module.
    from scipy.stats import fisher_exact

    p = float(fisher_exact(table, alternative="greater").pvalue)
    if p < alpha:
        return CorrectnessCheck(True, f"{said} (more, at p = {p:.2g} < {alpha:.2g})", p)
    return CorrectnessCheck(False, f"{said} (not more than the baseline's, p = {p:.2g})", p)


def _short(side: JobOutcomes) -> str:
    return str(bad_jobs(side)) if not side.bad else describe(side)
