"""The one run loop: plans (one per side) on their Targets, scenario by scenario, reps interleaved
A, B, A, B..., every result saved as its reps come (`Save`), and marked incomplete with the
reason on any way out (a failure, Ctrl-C, SIGTERM). A saved result is never lost: a plan's
first rep moves it to its history, and a plan that ends without a rep saves beside it
(results/history.py)."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jobbench.core.run.lanes import Lanes, lanes_for, run_rows
from jobbench.core.run.settle import Settler
from jobbench.core.run.target_seam import Plan, Progress, Session
from jobbench.errors import (
    INTERRUPTED,
    CandidateFailed,
    Interrupted,
    JobbenchError,
    RunFailed,
    name_kept_logs,
)
from jobbench.measure import metrics
from jobbench.measure.figures import PhaseSamples, RepMeasure
from jobbench.procs.signals import interrupts_deferred, sigterm_as_interrupt
from jobbench.results.behaviour import in_summary
from jobbench.results.events_file import EventsWriter
from jobbench.results.history import archive, events_path, failed_path, worth_keeping
from jobbench.results.model import Phases, Rep, Result, ScenarioResult, spreads
from jobbench.results.store import environment, new_document, write_document


def add_rep(entry: ScenarioResult, measure: RepMeasure, every_samples: list[PhaseSamples]) -> None:
    """Append a rep and refresh what is computed over reps. A partial rep (cut short, always
    the last) or a disturbed measurement (a saturated queue or driver, a busy machine) stays
    out of the summary when undisturbed ones exist: flagged, never averaged in. What the
    workers did themselves (a stall, a spinning worker) is the measurement: such reps count."""
    figures = measure.figures
    entry.reps.append(Rep.model_validate(figures))  # the one place a rep's figures become a Rep
    every_samples.append(measure.samples)
    reps = [rep.model_dump(exclude_unset=True) for rep in entry.reps]  # measure/ takes dicts
    clean = [i for i, rep in enumerate(entry.reps) if in_summary(rep)]
    keep = clean or list(range(len(reps)))
    summary = metrics.summarise_reps([reps[i] for i in keep])
    entry.pooled_phases = Phases.model_validate(
        metrics.pooled_phases([every_samples[i] for i in keep])
    )
    entry.outliers = metrics.outlier_reps(reps)
    if "submission" in figures:  # a live rep records how long its paced /run calls took
        spans = (reps[i]["submission"]["span_s"] for i in keep)
        summary["submission_span_s"] = metrics.across(spans)
    entry.summary = spreads(summary)


def run_plans(
    plans: list[Plan],
    progress: Progress,
    settle: Settler | None = None,
    candidate: int | None = None,
    beside_from: int | None = None,
    lanes: int | str | Lanes = 1,
) -> list[Result]:
    """Run every plan's scenarios; with several plans, reps alternate A, B, A, B... `settle`
    (two plans, `--reps auto`) decides after each pair past the first reps whether a row needs
    more. A SIGTERM is a Ctrl-C here: either ends with every process stopped and the results so
    far saved, marked interrupted. A rep the `candidate` plan's own workers cut short ends the
    run with the results so far, marked incomplete, for the comparison to judge (CandidateFailed).
    The plans from `beside_from` on are variants set beside the comparison (a suite's
    `variants`): a rep their own workers cut short ends only that variant's scenario, its result
    marked incomplete with the reason, and the others go on. Any other failure raises.
    `lanes` (a number, or `auto`: one a row) runs the rows side by side as far as every plan's
    target has room (core/run/lanes.py); given as Lanes, the run shares them with the runs
    beside it (a trend's commits side by side on a cluster)."""
    for plan in plans:
        plan.target.preflight(plan.config.scenarios, progress)
    first = plans[0]
    docs = [new_document(p.config.label, p.target.describe(), environment(None)) for p in plans]
    saves = [Save(p.path, p.config.save_events) for p in plans]
    try:
        with sigterm_as_interrupt():
            progress.message(first.target.header(first.config.scenarios, first.config.reps))
            rows = len(first.config.scenarios)
            shared = _lanes(plans, lanes, progress)
            run = _Run(plans, docs, saves, progress, settle, candidate, beside_from, shared)
            run_rows(rows, lambda index: _run_scenario(run, index), shared)
        for doc in docs:
            doc.complete = doc.error is None  # a variant beside the comparison may have stopped
    except CandidateFailed as exc:
        mark_failed(docs, f"not every rep ran: the candidate's run stopped ({exc})",
                    interrupted=False)  # fmt: skip
        docs[candidate if candidate is not None else -1].error = str(exc)
        progress.message(f"the candidate's run stopped: {exc}")
    except KeyboardInterrupt:
        mark_failed(docs, f"{INTERRUPTED} before every rep ran", interrupted=True)
        raise Interrupted(f"interrupted: partial results saved in {_where(saves)}") from None
    except Interrupted as exc:
        mark_failed(docs, str(exc), interrupted=True)
        raise Interrupted(f"{exc}; partial results saved in {_where(saves)}") from None
    except Exception as exc:  # a bug as well: the saved result still says why it stopped
        mark_failed(docs, _describe(exc), interrupted=False)
        kept = [save.where() for save in saves if save.keeps_previous()]
        if kept and isinstance(exc, JobbenchError) and exc.args:
            exc.args = (f"{exc}; result saved in {', '.join(kept)}", *exc.args[1:])
        raise
    finally:
        with interrupts_deferred():  # a second signal must not cut the last save short
            for save, doc in zip(saves, docs):
                save.close(doc)
    return docs


# A result is written whole, so after a rep it is written again only this long (wall clock)
# after the last time: simulated reps come by the thousand a second, and a write after each made
# a long simulated compare quadratic (500 reps a side of one 64-job row took 105 s, now 45 s).
# A run's first rep and its end are always written, and a rep's events wait with it, so the
# result and its events file hold the same reps whenever either is read.
SAVE_EVERY_S = 1.0


@dataclass
class Save:
    """Where one plan's result goes. The result saved at `path` before this run stays there
    until this run's first rep is saved, which moves it (and its events) to its history; a run
    that ends without a rep leaves it untouched and saves at `<label>.failed.json` instead."""

    path: Path
    save_events: bool
    writer: EventsWriter | None = field(default=None, init=False)
    started: bool = field(default=False, init=False)  # a rep of this run is saved at `path`
    _keeps: bool | None = field(default=None, init=False)
    _unwritten: list[tuple[str, int, list[dict[str, Any]]]] = field(
        default_factory=list, init=False
    )  # the events of reps in the result in memory, not yet on disk
    _written_at: float | None = field(default=None, init=False)

    def save_rep(self, doc: Result, scenario: str, rep: int, events: list[dict[str, Any]]) -> None:
        """The rep in the result and its events: written now if no write was SAVE_EVERY_S
        ago, else with the next (the caller defers signals around both)."""
        if not self.started:
            archive(self.path)
            self.started = True
            self.writer = EventsWriter(events_path(self.path)) if self.save_events else None
        if self.writer is not None:
            self._unwritten.append((scenario, rep, events))
        if self._written_at is None or time.monotonic() - self._written_at >= SAVE_EVERY_S:
            self._write(doc)

    def _write(self, doc: Result) -> None:
        """The reps' events not yet written, then the result that counts them."""
        if self.writer is not None:
            for scenario, rep, events in self._unwritten:
                self.writer.write_rep(scenario, rep, events)
        self._unwritten.clear()
        write_document(doc, self.path)
        self._written_at = time.monotonic()

    def keeps_previous(self) -> bool:
        """No rep ran and the file at `path` holds one: it stays, this run saves beside it."""
        if self._keeps is None:  # decided once: the message and the save must agree
            self._keeps = not self.started and worth_keeping(self.path)
        return self._keeps

    def where(self) -> str:
        if self.keeps_previous():
            return f"{failed_path(self.path)} (no rep ran: {self.path}, an earlier run, kept)"
        return str(self.path)

    def close(self, doc: Result) -> None:
        if self.keeps_previous():
            write_document(doc, failed_path(self.path))
            return
        if not self.started and self.save_events:  # an empty events file, as no rep ran
            EventsWriter(events_path(self.path)).close()
        self._write(doc)
        if self.writer is not None:
            self.writer.close()


def mark_failed(docs: list[Result], error: str, *, interrupted: bool) -> None:
    for doc in docs:
        doc.complete = False
        doc.interrupted = interrupted
        doc.error = error


def _where(saves: list[Save]) -> str:
    return ", ".join(save.where() for save in saves)


def _describe(exc: Exception) -> str:
    return str(exc) if isinstance(exc, JobbenchError) else f"{type(exc).__name__}: {exc}"


def _lanes(plans: list[Plan], asked: int | str | Lanes, progress: Progress) -> Lanes:
    """The run's lanes, said when there are several (shared ones are the caller's to say)."""
    if isinstance(asked, Lanes):
        return asked
    rows = len(plans[0].config.scenarios)
    room = min(plan.target.lanes_room(plan.config.scenarios) for plan in plans)
    lanes = Lanes(lanes_for(asked, rows, room), progress)
    if lanes.lanes > 1:
        how = "side by side" if lanes.lanes == rows else f"{lanes.lanes} at a time"
        progress.message(
            f"{lanes.lanes} lanes: the {rows} rows run {how}, each with its own queues and "
            "workers (--lanes 1: one at a time)"
        )
    return lanes


@dataclass
class _Run:
    """What every row of a run shares: the plans, their results and saves, and the lanes."""

    plans: list[Plan]
    docs: list[Result]
    saves: list[Save]
    progress: Progress
    settle: Settler | None
    candidate: int | None
    beside_from: int | None
    lanes: Lanes


def _run_scenario(run: _Run, index: int) -> None:
    """Row `index`: a session per plan, started; its reps; every session stopped."""
    sessions: list[Session] = []
    stopped: set[int] = set()  # plans beside the comparison whose workers stopped them
    succeeded = False
    try:
        with run.lanes.starting():
            for plan in run.plans:
                label = plan.config.label if len(run.plans) > 1 else ""
                session = plan.target.session(plan.config.scenarios[index], label, run.progress)
                sessions.append(session)  # before start: a failed start is stopped too
                session.start()
            entries = [session.entry() for session in sessions]
        with run.lanes.lock:  # in the suite's order, whichever row's lane started first
            for plan, session, doc, entry in zip(run.plans, sessions, run.docs, entries):
                order = [scenario.name for scenario in plan.config.scenarios]
                doc.scenarios.append(entry)
                doc.scenarios.sort(key=lambda e: order.index(e.name))
                doc.environment.learn(session.environment())
        _run_reps(run, sessions, entries, stopped)
        succeeded = True
    except JobbenchError as exc:
        if not isinstance(exc, Interrupted):  # an interrupted run says where its result is
            name_kept_logs(exc, [str(s.logs_folder) for s in sessions if s.logs_folder])
        raise
    finally:
        running = [s for p, s in enumerate(sessions) if p not in stopped]
        stop_sessions(running, keep_logs=not succeeded)


def _run_reps(
    run: _Run, sessions: list[Session], entries: list[ScenarioResult], stopped: set[int]
) -> None:
    """The scenario's reps, a pair at a time (A, then B), each pair when the lanes let it; a
    plan beside the comparison that its workers stop goes into `stopped`."""
    samples: list[list[PhaseSamples]] = [[] for _ in run.plans]
    reps = run.plans[0].config.reps
    deadline = run.settle.begin_row(run.lanes.capacity) if run.settle else 0.0
    rep = 0
    while True:
        rep += 1
        with run.lanes.pair():
            began = time.monotonic()
            for p, (session, entry) in enumerate(zip(sessions, entries)):
                if p not in stopped:
                    _run_rep(run, p, session, entry, samples[p], rep, max(rep, reps), stopped)
            pair_s = time.monotonic() - began
        if rep >= reps and (run.settle is None or run.settle.stop(entries, rep, pair_s, deadline)):
            return


def _run_rep(
    run: _Run,
    p: int,
    session: Session,
    entry: ScenarioResult,
    samples: list[PhaseSamples],
    rep: int,
    reps: int,
    stopped: set[int],
) -> None:
    """Plan `p`'s rep, saved; then what ends it early, if anything: the candidate's own failure
    ends the run (CandidateFailed), a variant beside the comparison that its workers stop is
    stopped at once (its logs kept) and goes into `stopped`, anything else raises."""
    outcome = session.run_rep(rep, reps)
    lanes = run.lanes
    if lanes.lanes > 1:  # how many rows ran a pair meanwhile, this one included
        outcome.measure.figures["lanes"] = lanes.running
        lanes.observe(outcome.measure.figures)
    with interrupts_deferred(), lanes.lock:  # the rep in the result and its events, or neither
        add_rep(entry, outcome.measure, samples)
        run.saves[p].save_rep(run.docs[p], session.scenario.name, rep, outcome.events)
    if outcome.stopped is None:
        return
    own = isinstance(outcome.stopped, RunFailed) and not isinstance(outcome.stopped, Interrupted)
    if p == run.candidate and own:
        raise CandidateFailed(str(outcome.stopped)) from outcome.stopped
    if run.beside_from is not None and p >= run.beside_from and own:
        # Its workers hung or died: the rep is saved, the variant's table column shows its
        # jobs not done, and the others must not lose their run to it. Stopped at once, so
        # its hung workers disturb no other variant's rep.
        doc = run.docs[p]
        why = f"{session.scenario.name} rep {rep}: {outcome.stopped}"
        doc.error = f"{doc.error}; {why}" if doc.error else why
        stopped.add(p)
        stop_sessions([session], keep_logs=True)
        run.progress.message(f"{session.title}: stopped; logs in {session.logs_folder}")
        return
    raise outcome.stopped


def stop_sessions(sessions: list[Session], keep_logs: bool = False) -> None:
    """Stop every session, even if one fails; a Ctrl-C meanwhile waits until the last is done.
    On failure the logs stay for the error message to point at."""
    with interrupts_deferred(), contextlib.ExitStack() as later:
        for session in reversed(sessions):  # callbacks run last in, first out: A, then B
            if keep_logs:
                session.keep_logs()
            later.callback(session.stop)
