"""What disturbed a scenario's reps, for the terminal and the HTML page alike: per rep the
faults injected, the jobs a fault hit that still completed (recovered), the jobs lost, failed
and redelivered, the stalls the watchdog saw (the
resilience table: with faults asked for it is the measurement), and a line per flagged rep."""

from __future__ import annotations

from jobbench.measure.stats import summary
from jobbench.render.words.cells import fmt
from jobbench.results.model import Rep, ScenarioResult
from jobbench.verdict.behaviour import is_measurement
from jobbench.verdict.correctness import bad_jobs, describe, rep_bad, side_outcomes

HEAD = (
    "rep",
    "faults injected",
    "recovered",
    "lost",
    "failed",
    "redelivered",
    "stalls",
    "time to 99 %",
)
LEGEND = (
    "recovered: jobs a fault hit that still completed; lost: delivered and never reported done; "
    "failed: ended FAILED; redelivered: delivered more than once; stalls: times the watchdog saw "
    "a worker stop working (docs/reliability.md)"
)


def disturbed(rep: Rep) -> bool:
    return bool(
        rep.faults
        or rep.anomalies
        or rep.partial
        or rep.jobs.redelivered
        or rep_bad(rep.jobs)  # failed, timed out, lost, unfinished or doubled jobs
    )


def completed_share(entry: ScenarioResult) -> tuple[float, float, float] | None:
    """Median, min and max over the reps of the share of jobs that completed; None when every
    job of every rep completed (the row would only say 100 %)."""
    reps = [rep for rep in entry.reps if rep.jobs.submitted]
    if not any(rep_bad(rep.jobs) for rep in reps):
        return None
    figure = summary([rep.jobs.completed / rep.jobs.submitted for rep in reps])
    return figure["median"], figure["min"], figure["max"]


def outcome_line(entry: ScenarioResult) -> str | None:
    """`jobs: 4 of 40 jobs failed (10.0 %) over 1 rep; only completed jobs count as done`, when
    any job of the scenario ended badly (None otherwise)."""
    side = side_outcomes(entry)
    if not side.bad or not side.jobs:
        return None
    reps = len(entry.reps)
    return (
        f"jobs: {describe(side)} ({bad_jobs(side) / side.jobs:.1%}) over {reps} "
        f"rep{'s' if reps != 1 else ''}; times to X % count completed jobs only"
    )


def resilience_rows(entry: ScenarioResult) -> list[list[str]]:
    """One row per rep, or none when no rep was disturbed and no fault was asked for."""
    faulted = bool(entry.params.faults or entry.params.worker_faults)
    if not faulted and not any(disturbed(rep) for rep in entry.reps):
        return []
    rows = []
    for number, rep in enumerate(entry.reps, start=1):
        faults = ", ".join(f"{kind} {n}" for kind, n in (rep.faults or {}).items()) or "none"
        stalls = [a for a in rep.anomalies or [] if a.kind == "stall"]
        rows.append(
            [
                f"{number}" + (f" ({rep.partial})" if rep.partial else ""),
                faults,
                str(rep.jobs.recovered or 0),
                str(rep.jobs.lost or 0),
                str(rep.jobs.failed),
                str(rep.jobs.redelivered or 0),
                str(len(stalls)),
                fmt(rep.time_to_p99_s, "s"),
            ]
        )
    return rows


def rep_notes(entry: ScenarioResult) -> list[str]:
    """How the jobs ended when any ended badly, then a line per flagged rep: a disturbed
    measurement (a saturated harness, a partial rep) is set aside; what the workers did
    themselves (a stall, a spinning worker) counts, and is said."""
    lines = [line] if (line := outcome_line(entry)) is not None else []
    for number, rep in enumerate(entry.reps, start=1):
        for anomaly in rep.anomalies or []:
            if anomaly.kind == "stall":
                came_back = "" if anomaly.resumed else ", never came back"
                lines.append(
                    f"rep {number}: worker {anomaly.worker} stalled "
                    f"{fmt(anomaly.for_s, 's')} from {fmt(anomaly.at_s, 's')} holding "
                    f"{anomaly.held} jobs{came_back} (the worker's own: counted)"
                )
            elif is_measurement(anomaly.kind):
                lines.append(
                    f"rep {number} set aside: the harness was saturated ({anomaly.what}); "
                    f"{anomaly.fix}"
                )
            else:
                what = f" ({anomaly.what})" if anomaly.what else ""
                lines.append(f"rep {number}: {anomaly.kind}{what} (the worker's own: counted)")
        if rep.partial:
            lines.append(f"rep {number} is partial ({rep.partial}): cut short, set aside")
        if rep.lost_jobs:
            shown = ", ".join(rep.lost_jobs[:5]) + (" ..." if len(rep.lost_jobs) > 5 else "")
            lines.append(f"rep {number} lost {len(rep.lost_jobs)} jobs: {shown}")
    return lines
