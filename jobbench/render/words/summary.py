"""A scenario's summary table, the one list for every format that shows it (the terminal's run
table and the HTML page's summary): which figures of `scenarios[].summary` it holds, their titles
(the job phases named as this mode measures them), their order and their units.

The page shows every row; the terminal's table is read at a glance under each run, so a row
marked `terminal=False` (the first job done, utilisation, each phase's p90 and max) is the
page's only: the terminal shows the same figures, fewer of them, never others. Every format then
writes median / min / max over the reps for each side, with `cells.fmt`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jobbench.render.words.cells import fmt
from jobbench.render.words.explain import buffered_any, is_live, phase_title
from jobbench.render.words.resilience import completed_share
from jobbench.results.model import ScenarioResult

COLUMNS = ("median", "min", "max")  # the statistics over the reps, a column each per side


@dataclass(frozen=True)
class SummaryRow:
    """One figure of the summary. A phase row (`phase` set) is titled by its phase's name in
    this mode (render/words/explain.py), then `title` (the statistic)."""

    title: str
    key: str  # the figure's key in `scenarios[].summary`
    unit: str  # as cells.fmt writes it
    phase: str = ""  # queue_wait, service or e2e: the job phase the figure is of
    terminal: bool = True  # the terminal's table shows it too
    held: bool = False  # take-ahead's cost: shown only where some rep held a job in a buffer

    def titled(self, live: bool) -> str:
        return f"{phase_title(self.phase, live)} {self.title}" if self.phase else self.title


def _phase_rows() -> tuple[SummaryRow, ...]:
    """Each job phase's p50, p90, p99 and max; the terminal's table keeps p50 and p99."""
    return tuple(
        SummaryRow(stat, f"{phase}_{stat}_s", "s", phase=phase, terminal=stat in ("p50", "p99"))
        for phase in ("queue_wait", "service", "e2e")
        for stat in ("p50", "p90", "p99", "max")
    )


# A row shows where the summary has its figure: a burst has no steady figures, a fixed fleet no
# fleet figures, older results no held ones.
ROWS: tuple[SummaryRow, ...] = (
    SummaryRow("time to first done", "time_to_first_s", "s", terminal=False),
    SummaryRow("time to 50 %", "time_to_p50_s", "s"),
    SummaryRow("time to 99 %", "time_to_p99_s", "s"),
    SummaryRow("time to 100 %", "time_to_p100_s", "s"),
    SummaryRow("throughput", "throughput_jps", "jobs/s"),
    *_phase_rows(),
    SummaryRow("takes", "takes_count", ""),
    SummaryRow("mean take size", "takes_got_mean", "jobs"),
    SummaryRow("requests per job", "requests_per_job", "ratio"),  # the workers' (docs/metrics.md)
    # an arrival profile's (docs/load-profiles.md)
    SummaryRow("steady rate in", "steady_arrival_rate_jps", "jobs/s"),
    SummaryRow("steady rate out", "steady_completion_rate_jps", "jobs/s"),
    SummaryRow("steady e2e p50", "steady_e2e_p50_s", "s"),
    SummaryRow("steady e2e p99", "steady_e2e_p99_s", "s"),
    SummaryRow("ideal steady e2e p99", "steady_ideal_e2e_p99_s", "s"),
    SummaryRow("held jobs", "held_jobs", "", held=True),
    SummaryRow("held extra wait p99", "held_extra_wait_p99_s", "s", held=True),
    # an autoscaled fleet's (docs/fleet.md)
    SummaryRow("worker-seconds", "fleet_worker_s", "s"),
    SummaryRow("jobs per worker-second", "fleet_jobs_per_worker_s", "ratio"),
    SummaryRow("cold starts", "fleet_cold_starts", ""),
    SummaryRow("peak workers", "fleet_peak_workers", ""),
    SummaryRow("first scale-up", "fleet_first_scale_up_s", "s"),
    SummaryRow("first added worker polling", "fleet_scale_up_delay_s", "s"),
    SummaryRow("jobs hidden from the scaler", "fleet_hidden_max", ""),
    SummaryRow("utilisation", "utilisation", "%", terminal=False),
    SummaryRow("efficiency", "efficiency", "%"),
)
# Not a figure of the summary but of the reps' job counts (render/words/resilience.py), shown
# last and flagged when some job ended badly.
COMPLETED_TITLE, COMPLETED_UNIT = "jobs completed", "%"

Stats = tuple[float | None, float | None, float | None]  # median, min, max over the reps
NO_STATS: Stats = (None, None, None)


@dataclass(frozen=True)
class SummaryLine:
    """One row as shown: its title in this mode and each side's statistics."""

    title: str
    unit: str
    sides: tuple[Stats, ...]  # one per result shown side by side
    bad: bool = False  # the jobs-completed row: some job of some rep did not complete

    def cells(self) -> list[str]:
        """Median, min and max of each side, formatted."""
        return [fmt(value, self.unit) for stats in self.sides for value in stats]

    def medians(self) -> list[float | None]:
        return [stats[0] for stats in self.sides]


def summary_lines(entries: Sequence[ScenarioResult], terminal: bool) -> list[SummaryLine]:
    """The rows some side has a figure for, in ROWS's order (the terminal's only if `terminal`),
    then the share of jobs completed if some job did not. Held rows show only where some side
    held a job; a live side names the phases as the platform does."""
    live = is_live(entries[0])
    held = any(buffered_any(entry) for entry in entries)
    lines = []
    for row in ROWS:
        if (terminal and not row.terminal) or (row.held and not held):
            continue
        figures = [entry.summary.get(row.key) for entry in entries]
        if any(figures):
            sides = tuple((f.median, f.min, f.max) if f else NO_STATS for f in figures)
            lines.append(SummaryLine(row.titled(live), row.unit, sides))
    shares = [completed_share(entry) for entry in entries]
    if any(shares):
        sides = tuple(share or NO_STATS for share in shares)
        lines.append(SummaryLine(COMPLETED_TITLE, COMPLETED_UNIT, sides, bad=True))
    return lines
