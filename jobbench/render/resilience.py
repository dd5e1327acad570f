"""What disturbed a scenario's reps, for the terminal and the HTML page alike: per rep the
faults injected, the jobs a fault hit that still completed (recovered), the jobs lost, failed
and redelivered, the stalls the watchdog saw (the
resilience table: with faults asked for it is the measurement), and a line per flagged rep."""

from __future__ import annotations

from jobbench.render.cells import fmt
from jobbench.results.model import Rep, ScenarioResult

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
    return bool(rep.faults or rep.jobs.lost or rep.anomalies or rep.partial or rep.jobs.redelivered)


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
    """A line per flagged rep: why the summary sets it aside (a stall, a partial rep)."""
    lines = []
    for number, rep in enumerate(entry.reps, start=1):
        for anomaly in rep.anomalies or []:
            if anomaly.kind == "stall":
                came_back = "" if anomaly.resumed else ", never came back"
                lines.append(
                    f"rep {number} set aside: worker {anomaly.worker} stalled "
                    f"{fmt(anomaly.for_s, 's')} from {fmt(anomaly.at_s, 's')} holding "
                    f"{anomaly.held} jobs{came_back}"
                )
            elif anomaly.kind == "saturated":
                lines.append(
                    f"rep {number} set aside: the harness was saturated ({anomaly.what}); "
                    f"{anomaly.fix}"
                )
            else:
                lines.append(f"rep {number} set aside: {anomaly.kind}")
        if rep.partial:
            lines.append(f"rep {number} is partial ({rep.partial}): cut short, set aside")
        if rep.lost_jobs:
            shown = ", ".join(rep.lost_jobs[:5]) + (" ..." if len(rep.lost_jobs) > 5 else "")
            lines.append(f"rep {number} lost {len(rep.lost_jobs)} jobs: {shown}")
    return lines
