"""Rich terminal output: the live progress bar and the result tables (the only rich importer)."""

from __future__ import annotations

import sys
import threading
from typing import Any

from rich import box
from rich.console import Console as Console  # re-exported: render.progress types with it
from rich.console import Group
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from jobbench.render.text.arrivals import pacing_line, steady_line
from jobbench.render.words.explain import (
    below_slots_lines,
    fleet_line,
    gap_line,
    harness_line,
    held_line,
    ideal_lines,
    legend,
    predicted_line,
    ran_own_inputs,
    refresh_line,
    scenario_title,
)
from jobbench.render.words.resilience import HEAD, LEGEND, rep_notes, resilience_rows
from jobbench.render.words.summary import COLUMNS, summary_lines
from jobbench.results.compare import is_profile
from jobbench.results.model import Comparison, Result, ScenarioResult

WIDE_WIDTH = 400


class RichProgress:
    """A bar per rep (done / burst, elapsed) on a TTY; rows in lanes (core/run/lanes.py) each
    have their rep's bar at once."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._tasks: dict[int, Any] = {}  # each thread's bar (a lane's)
        self._lock = threading.Lock()

    def message(self, text: str) -> None:
        self.console.print(f"[dim]{text}[/dim]")

    def rep_started(self, scenario: str, rep: int, reps: int, burst: int) -> None:
        self._begin(f"{scenario} rep {rep}/{reps}", burst)

    def steps_started(self, title: str, total: int) -> None:
        """Counted steps that are no rep's jobs (a sweep's cells), then told by rep_progress."""
        self._begin(title, total)

    def steps_finished(self) -> None:
        self._end()

    def rep_progress(self, done: int, total: int) -> None:
        task = self._tasks.get(threading.get_ident())
        if task is not None:
            self._bar.update(task, completed=done)

    def rep_finished(self, scenario: str, rep: int, figures: dict[str, Any]) -> None:
        self._end()
        p99 = figures.get("time_to_p99_s")
        if p99 is not None:
            self.console.print(f"[dim]{scenario} rep {rep}: time to 99 % {p99:.3f} s[/dim]")
        for line in (pacing_line(figures), steady_line(figures)):
            if line is not None:
                self.console.print(f"[dim]  {line}[/dim]", highlight=False)

    def _begin(self, title: str, total: int) -> None:
        with self._lock:
            self._bar.start()
            self._tasks[threading.get_ident()] = self._bar.add_task(title, total=total)

    def _end(self) -> None:
        """This thread's bar gone; the display stopped once no bar is left."""
        with self._lock:
            task = self._tasks.pop(threading.get_ident(), None)
            if task is not None:
                self._bar.remove_task(task)
            if not self._tasks:
                self._bar.stop()

    def stop(self) -> None:
        """Before a last message: the bar cleared (it is transient), the cursor shown again."""
        self._bar.stop()


def rich_progress() -> tuple[Console, RichProgress]:
    """(a console on stdout for the results, a progress bar on stderr)."""
    return Console(), RichProgress(Console(stderr=True))


def stdout_console() -> Console:
    return Console(file=sys.stdout, width=100)


def scenario_table(entry: ScenarioResult) -> Table:
    """Median / min / max over the reps of the summary's rows the terminal shows
    (render/words/summary.py); its title is printed above it (scenario_heading): a table title
    wraps to the table's width, and a command line would fold into a column."""
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("metric")
    for column in COLUMNS:
        table.add_column(column, justify="right")
    for line in summary_lines([entry], terminal=True):
        title = Text(line.title, style="bold red") if line.bad else line.title
        table.add_row(title, *line.cells())
    return table


def scenario_heading(entry: ScenarioResult) -> Text:
    return Text(scenario_title(entry), style="bold")


def resilience_table(entry: ScenarioResult) -> Group | None:
    """Faults, lost jobs and stalls per rep (render/words/resilience.py), when there were any."""
    rows = resilience_rows(entry)
    if not rows:
        return None
    table = Table(title="faults and losses", title_justify="left", show_edge=False, pad_edge=False)
    for index, name in enumerate(HEAD):
        table.add_column(name, justify="left" if index < 2 else "right")
    for row in rows:
        table.add_row(*row)
    return Group(table, Text(LEGEND, style="dim"))


def scenario_footer(entry: ScenarioResult) -> Text:
    lines = ideal_lines(entry)
    if (predicted := predicted_line(entry)) is not None:
        lines.append(predicted)
    if (gap := gap_line(entry)) is not None:
        lines.append(gap)
    lines += rep_notes(entry)
    lines += below_slots_lines(entry)
    if (held := held_line(entry)) is not None:
        lines.append(held)
    if (fleet := fleet_line(entry)) is not None:
        lines.append(fleet)
    if (cpu := harness_line(entry)) is not None:
        lines.append(cpu)
    if (refreshed := refresh_line(entry)) is not None:
        lines.append(refreshed)
    for name, numbers in (entry.outliers or {}).items():
        if numbers:
            reps_text = ", ".join(str(n) for n in numbers)
            lines.append(f"outlier reps in {name}: {reps_text} (a gate sets them aside)")
    if entry.reps:
        split = entry.reps[-1].split.jobs_per_worker
        if split:
            parts = ", ".join(f"{w} {n}" for w, n in split.items())
            lines.append(f"split (last rep): {parts}")
    return Text("\n".join(lines), style="dim")


def live_footer(entry: ScenarioResult) -> Text:
    """What a live table needs beside it: pacing, unknown outcomes, queue depth, resolution."""
    if not entry.reps:
        return Text("")
    rep = entry.reps[-1]
    sub, jobs, follow, health = rep.submission, rep.jobs, rep.follow, rep.health
    if sub is None or follow is None or health is None:  # not a live rep
        return Text("")
    span = sub.span_s
    lines = [
        f"submission (last rep): {jobs.submitted} accepted over {span:.3f} s; retried "
        f"{sub.throttled} x 429, {sub.server_errors} x 5xx; {jobs.unknown} unknown, "
        f"{jobs.rejected} rejected"
        if span is not None
        else "no job was accepted",
        f"health (last rep): max {health.max_in_queue} queued, "
        f"max {health.max_workers_running} workers running",
    ]
    gap = follow.terminal_uncertainty
    if gap:
        lines.append(
            f"terminal times are client-observed, late by up to {gap.p50:.3f} s "
            f"(p50) / {gap.max:.3f} s (max)"
        )
    return Text("\n".join(lines), style="dim")


def render_result(doc: Result, console: Console, saved_to: str | None = None) -> None:
    live = doc.target.kind == "live"
    for entry in doc.scenarios:
        footer = live_footer(entry) if live else scenario_footer(entry)
        console.print(Group(scenario_heading(entry), scenario_table(entry), footer))
        if (resilience := resilience_table(entry)) is not None:
            console.print(resilience)
        console.print()
    if doc.scenarios:  # what each figure is, once for every table above
        profile = any(is_profile(entry) for entry in doc.scenarios)
        own_inputs = all(ran_own_inputs(entry) for entry in doc.scenarios)
        console.print(Text("\n".join(legend(live, profile, own_inputs)), style="dim"))
        console.print()
    if live:
        console.print(f"target {doc.target.endpoint} (live)", highlight=False)
    if not doc.complete:
        console.print(f"[bold red]incomplete:[/bold red] {doc.error}")
    if saved_to:
        console.print(f"saved {saved_to}")


def render_comparison(
    comparison: Comparison, out: Any, width: int = 100, wide: bool = False
) -> None:
    """The comparison as a rich table (the `table` format): within 100 columns, the gated
    metric only; `wide` adds every other figure."""
    from jobbench.render.words.cells import (
        header,
        held_lines,
        legend,
        row_cells,
        title,
        verdict_lines,
    )

    console = Console(file=out, width=width)
    table = Table(
        title=title(comparison),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    for index, name in enumerate(header(comparison, wide)):
        table.add_column(name, justify="left" if index == 0 else "right", overflow="fold")
    for row in comparison.rows:
        cells = row_cells(row, comparison, wide)
        style = {"REGRESSION": "bold red", "better": "green"}.get(cells[-1], "")
        table.add_row(*cells, style=style)
    if wide:  # the wide table takes the width it needs (pipe it to `less -S`)
        roomy = Console(file=out, width=WIDE_WIDTH)
        console = Console(file=out, width=Measurement.get(roomy, roomy.options, table).maximum)
    console.print(table)
    for line in [] if wide else held_lines(comparison):  # the wide table has them as columns
        console.print(line, highlight=False)
    for line in legend(comparison, wide):
        console.print(line, style="dim")
    for line in verdict_lines(comparison):
        console.print(line)
