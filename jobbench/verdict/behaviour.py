"""What a side's own processes did, told apart from what disturbed the measurement (docs/ci.md,
"Correctness and behaviour first").

A rep's anomalies are of two kinds:
- **measurement**: the harness itself was disturbed (the queue or the driver saturated, the
  machine busy with processes outside the run). Such a rep measured the harness, not the
  worker, so its figures are set aside, as before;
- **behaviour**: what the side's own workers did (a stall, a worker spinning a core, a worker
  that would not stop, workers writing to disk on every job). That is part of the
  measurement: the rep counts, and a candidate that shows a behaviour more often than its
  baseline is judged for it. An unknown kind is taken as behaviour, so a new kind of anomaly
  can never hide a candidate's fault.

Beside the anomalies, three figures of the workers are compared like the latency: their CPU per
completed job, how unevenly the jobs spread over them and their requests per completed job
(results/rep_metrics.py METRICS). Their disk writes per job are compared and shown, but judged
here only, as the `disk_writes` behaviour of the reps over its threshold
(measure/disk_writes.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from jobbench.measure.disk_writes import DISK_KIND
from jobbench.results.model import Rep, ScenarioResult

# A behaviour the baseline shows too, seen more often in the candidate at this one-sided p but
# not at the row's level, is inconclusive (more reps should tell); a weaker excess is the
# baseline's own rate drawn twice, and passes named. Without this line, a stall in one rep of
# ten on both sides left 43 % of no-change calls inconclusive (benchmarks/gate_error_rates.py).
SUSPECT_P = 0.05
# The anomaly kinds that disturb the measurement rather than describe the worker.
MEASUREMENT_KINDS = frozenset({"saturated"})
# A rep its own workers cut short (rep_drive.RepEnd.partial) ended the side's run there: the
# kind it counts as. One such rep is a fact, not a sample, like a failed job.
RUN_ENDING = {"stalled": "hung", "worker died": "died"}
WORDS = {
    "hung": "a worker hung past the watchdog's give-up, ending the run",
    "died": "a worker died, ending the run",
    "stall": "a worker stalled",
    "worker_cpu": "a worker kept a core busy",
    "stop timeout": "a worker did not stop when told",
    DISK_KIND: "the workers wrote to disk on every job",
}


def is_measurement(kind: str) -> bool:
    return kind in MEASUREMENT_KINDS


def in_summary(rep: Rep) -> bool:
    """A rep a run's summary counts: whole (not cut short) and its measurement undisturbed.
    What the workers did themselves (a stall, a spinning worker) is the measurement: counted."""
    return rep.partial is None and not any(is_measurement(a.kind) for a in rep.anomalies or [])


def rep_behaviour(rep: Rep) -> set[str]:
    """The behaviour kinds one rep showed, a run its workers ended included."""
    kinds = {a.kind for a in rep.anomalies or [] if not is_measurement(a.kind)}
    ending = RUN_ENDING.get(rep.partial or "")
    return kinds | {ending} if ending is not None else kinds


def side_behaviour(entry: ScenarioResult) -> dict[str, int]:
    """Per behaviour kind, how many of the side's reps showed it."""
    counts: dict[str, int] = {}
    for rep in entry.reps:
        for kind in rep_behaviour(rep):
            counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items()))


@dataclass(frozen=True)
class BehaviourCheck:
    verdict: str  # regression | inconclusive | pass
    reason: str


def judge_behaviour(
    base: Mapping[str, int], cand: Mapping[str, int], reps: tuple[int, int], alpha: float
) -> BehaviourCheck | None:
    """Each kind the candidate shows: in significantly more of its reps than the baseline
    (one-sided Boschloo exact test at the row's significance: Fisher's p as its statistic,
    unconditional, so uniformly more powerful on the few reps a gate runs, 9 of 10 against 0 of
    10 at p = 1.1e-5 where Fisher's gives 6e-5) is a regression; new to the
    candidate but in too few reps to be sure, or more often than in the baseline at p <
    SUSPECT_P but not at `alpha`, inconclusive with the kind named; otherwise said and passed.
    None: the candidate showed nothing."""
    n_a, n_b = reps
    found: list[BehaviourCheck] = []
    for kind, k_b in cand.items():
        k_a = base.get(kind, 0)
        table = [[k_b, max(n_b - k_b, 0)], [k_a, max(n_a - k_a, 0)]]
        # Deferred: scipy.stats costs ~0.7 s to import, and every command imports this module.
        from scipy.stats import boschloo_exact

        p = float(boschloo_exact(table, alternative="greater").pvalue)
        p = 1.0 if math.isnan(p) else p  # scipy's answer for a table it cannot test
        said = f"behaviour: {WORDS.get(kind, kind)} in {k_b} of {n_b} reps, baseline {k_a} of {n_a}"
        if kind in RUN_ENDING.values() and k_a == 0:
            found.append(BehaviourCheck("regression", f"{said} (a fact: no test needed)"))
        elif p < alpha:
            found.append(BehaviourCheck("regression", f"{said} (p = {p:.2g} < {alpha:.2g})"))
        elif k_a == 0:
            found.append(BehaviourCheck("inconclusive", f"{said}: new, too few reps to be sure"))
        elif p < SUSPECT_P:
            why = f"{said}: more often, not yet sure (p = {p:.2g}, needs < {alpha:.2g})"
            found.append(BehaviourCheck("inconclusive", why))
        else:
            why = f"{said}: not significantly more often than the baseline (p = {p:.2g})"
            found.append(BehaviourCheck("pass", why))
    if not found:
        return None
    worst = next(
        (v for v in ("regression", "inconclusive") if any(c.verdict == v for c in found)), "pass"
    )
    return BehaviourCheck(worst, "; ".join(c.reason for c in found))
