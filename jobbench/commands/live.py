"""`jobbench run --endpoint`: bursts at a live endpoint (or anything speaking RunPod's client API).

No queue and no workers are started; each rep is one burst submitted via /run and followed via
/status until every job is terminal. Results use the same schema as fake-queue runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from jobbench.clients.endpoint import (
    LiveTarget,
    confirm_burst,
    describe_rate,
    live_target,
    parse_submit_rate,
)
from jobbench.clients.live_burst import RUN_WINDOW, BurstPlan, LiveBurst
from jobbench.clients.live_http import LiveHttp
from jobbench.clients.live_records import BurstRecord
from jobbench.core import loop as benchmark
from jobbench.core.config import check_job_seconds, check_label, check_positive_int, read_inputs
from jobbench.core.fake_target import Progress
from jobbench.errors import EXIT_OK, Interrupted, JobbenchError, RunFailed, UsageError
from jobbench.measure import live_metrics, metrics
from jobbench.procs.signals import sigterm_as_interrupt
from jobbench.render.progress import make_progress, stdout_console
from jobbench.results.store import (
    EventsWriter,
    environment,
    new_document,
    print_json,
    result_path,
    write_json,
)

# Ctrl-C, or a CI job's timeout: either stops a burst and cancels the jobs it left queued.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass(frozen=True)
class LiveRunConfig:
    target: LiveTarget
    burst: int
    job_seconds: float
    inputs: tuple[Any, ...]
    reps: int
    label: str
    out: Path
    submit_rate: float | None
    save_events: bool = True
    quiet: bool = False

    @property
    def name(self) -> str:
        return f"live-{self.burst}j-{self.job_seconds:g}s"

    def job_inputs(self) -> tuple[Any, ...]:
        values = self.inputs or ({"seconds": self.job_seconds},)
        return tuple(values[i % len(values)] for i in range(self.burst))

    def rep_timeout_s(self) -> float:
        """A bound, never tight: cold starts, then every job on one slot, then the pacing."""
        submit_s = self.burst / (self.submit_rate or RUN_WINDOW[0] / RUN_WINDOW[1])
        return 300.0 + self.burst * max(self.job_seconds, 0.1) + submit_s


def live_config(flags: dict[str, Any]) -> LiveRunConfig:
    if flags.get("server"):
        raise UsageError("--server and --endpoint: give one (a fake queue URL or a live endpoint)")
    check_positive_int("--burst", flags["burst"])
    check_positive_int("--reps", flags["reps"])
    check_job_seconds(flags["job_seconds"])  # bench jobs get it as their input
    check_label(flags["label"])
    return LiveRunConfig(
        target=live_target(flags["endpoint"], flags["api_key"]),
        burst=flags["burst"],
        job_seconds=flags["job_seconds"],
        inputs=read_inputs(flags["input_json"], flags["inputs"]),
        reps=flags["reps"],
        label=flags["label"],
        out=Path(flags["out"]),
        submit_rate=parse_submit_rate(flags.get("submit_rate")),
        save_events=flags["events"],
        quiet=flags["quiet"],
    )


def ask_stdin(question: str) -> bool:
    sys.stderr.write(question + " [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def live_run_command(flags: dict[str, Any]) -> int:
    cfg = live_config(flags)
    confirm_burst(
        cfg.target.url,
        cfg.burst,
        cfg.reps,
        yes=bool(flags.get("yes")),
        interactive=sys.stdin.isatty(),
        ask=ask_stdin,
    )
    console, progress = make_progress(cfg.quiet)
    doc = run_live(cfg, progress)
    path = result_path(cfg.out, cfg.label)
    if flags["json_out"]:
        print_json(doc)
    else:
        render_live(doc, console, saved_to=str(path))
    from jobbench.commands.report import report_after_run

    report_after_run(doc, path, flags.get("html"), cfg.quiet)
    return EXIT_OK


def scenario_entry(cfg: LiveRunConfig) -> dict[str, Any]:
    return {
        "name": cfg.name,
        "params": {
            "workers": None,
            "slots": None,
            "burst": cfg.burst,
            "job_seconds": cfg.job_seconds,
            "take_ahead": None,
            "worker": "live",
            "policy": None,
            "latency": None,
            "submit_rate": describe_rate(cfg.submit_rate),
            "inputs": len(cfg.inputs) or None,
        },
        "ideal_s": None,
        "worker": "live endpoint",
        "sdk": None,
        "reps": [],
        "summary": {},
    }


def run_live(cfg: LiveRunConfig, progress: Progress) -> dict[str, Any]:
    """Every rep, saving after each; on Ctrl-C, SIGTERM or any failure what was measured is saved
    too, and the error with it."""
    doc = new_document(cfg.label, {"kind": "live", "endpoint": cfg.target.url}, environment(None))
    path = result_path(cfg.out, cfg.label)
    writer = EventsWriter(path.with_suffix(".events.jsonl")) if cfg.save_events else None
    # A SIGTERM between bursts is a Ctrl-C too; during one, _stop_on_signals takes both.
    with sigterm_as_interrupt():
        try:
            _run_reps(cfg, progress, doc, path, writer)
            doc["complete"] = True
        except KeyboardInterrupt:
            message = "interrupted (Ctrl-C or SIGTERM) before every rep ran"
            benchmark.mark_failed([doc], message, interrupted=True)
            raise Interrupted(f"interrupted: partial results saved in {path}") from None
        except Interrupted as exc:
            benchmark.mark_failed([doc], str(exc), interrupted=True)
            raise
        except Exception as exc:  # a bug too: the saved result says why it is incomplete
            benchmark.mark_failed([doc], _describe(exc), interrupted=False)
            raise
        finally:
            write_json(doc, path)
            if writer is not None:
                writer.close()
    return doc


def _run_reps(
    cfg: LiveRunConfig,
    progress: Progress,
    doc: dict[str, Any],
    path: Path,
    writer: EventsWriter | None,
) -> None:
    entry = scenario_entry(cfg)
    doc["scenarios"].append(entry)
    raw: list[dict[str, Any]] = []
    asyncio.run(_preflight(cfg.target))
    progress.message(
        f"live endpoint {cfg.target.url}: {cfg.burst} jobs x {cfg.reps} reps, "
        f"/run paced {describe_rate(cfg.submit_rate)}"
    )
    for rep in range(1, cfg.reps + 1):
        progress.rep_started(cfg.name, rep, cfg.reps, cfg.burst)
        record = asyncio.run(_drive(cfg, progress))
        figures = live_metrics.live_rep_metrics(record, keep_samples=True)
        _add_rep(entry, figures, raw)
        if writer is not None:
            writer.write_rep(cfg.name, rep, live_metrics.live_events(record))
        write_json(doc, path)
        progress.rep_finished(cfg.name, rep, figures)
        _raise_if_stopped(record, rep, path)


def _describe(exc: Exception) -> str:
    return str(exc) if isinstance(exc, JobbenchError) else f"{type(exc).__name__}: {exc}"


def _add_rep(entry: dict[str, Any], figures: dict[str, Any], raw: list[dict[str, Any]]) -> None:
    """A fake-queue run's rep bookkeeping, and two live extras: a partial rep (stopped, always
    the last) stays out of the summary when whole ones exist; the submission span is summarised."""
    benchmark.add_rep(entry, figures, raw)
    whole = [i for i, rep in enumerate(entry["reps"]) if "partial" not in rep]
    keep = whole or list(range(len(entry["reps"])))
    if len(keep) < len(entry["reps"]):
        entry["summary"] = metrics.summarise_reps([entry["reps"][i] for i in keep])
        entry["pooled_phases"] = metrics.pooled_phases([raw[i] for i in keep])
    spans = (entry["reps"][i]["submission"]["span_s"] for i in keep)
    entry["summary"]["submission_span_s"] = metrics.across(spans)


def _raise_if_stopped(record: BurstRecord, rep: int, path: Path) -> None:
    if record.stopped is None:
        return
    pending = sum(1 for job in record.jobs if job.outcome == "accepted" and job.done_ns is None)
    cancelled = record.counts["cancelled"]
    if record.stopped == "interrupted":
        raise Interrupted(
            f"interrupted in rep {rep}: cancelled {cancelled} of {pending} unfinished jobs; "
            f"partial results saved in {path}"
        )
    if record.stopped == "timeout":
        raise RunFailed(
            f"rep {rep} did not finish in time: {pending} jobs unfinished ({cancelled} "
            f"cancelled); partial results saved in {path}"
        )
    raise record.error or RunFailed(f"rep {rep} failed; partial results saved in {path}")


async def _preflight(target: LiveTarget) -> None:
    http = LiveHttp(target, max_connections=4)
    try:
        await http.preflight()
    finally:
        await http.close()


@contextlib.contextmanager
def _stop_on_signals(on_signal: Callable[[], None]) -> Iterator[None]:
    """While it lasts, Ctrl-C and SIGTERM call `on_signal` in the running loop. The handlers
    before come back after (signal.signal, not loop.add_signal_handler, whose removal leaves
    SIGTERM's default, which kills, until they are put back)."""
    loop = asyncio.get_running_loop()

    def handler(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(on_signal)

    previous: dict[signal.Signals, Any] = {}
    try:
        with contextlib.suppress(ValueError):  # not the main thread: no handlers of ours
            for sig in STOP_SIGNALS:
                previous[sig] = signal.signal(sig, handler)
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, signal.SIG_DFL if old is None else old)


async def _drive(cfg: LiveRunConfig, progress: Progress) -> BurstRecord:
    """One burst; the first Ctrl-C or SIGTERM stops it and cancels its pending jobs, a second
    one skips the cancelling."""
    stop, hard_stop = asyncio.Event(), asyncio.Event()

    def on_signal() -> None:
        (hard_stop if stop.is_set() else stop).set()

    expected = None if cfg.inputs else cfg.job_seconds  # the bench handler sleeps that long
    plan = BurstPlan(
        cfg.job_inputs(), cfg.submit_rate, cfg.rep_timeout_s(), expected_execution_s=expected
    )
    http = LiveHttp(cfg.target)
    try:
        with _stop_on_signals(on_signal):
            record = await LiveBurst(http, plan, progress.rep_progress).run(stop, hard_stop)
        if stop.is_set() and record.stopped is None:  # stopped just as the burst ended
            record.stopped = "interrupted"
        return record
    finally:
        await http.close()


def footer_lines(entry: dict[str, Any]) -> list[str]:
    """What a live table needs beside it: pacing, unknown outcomes, queue depth, resolution."""
    if not entry["reps"]:
        return []
    rep = entry["reps"][-1]
    sub, jobs, follow = rep["submission"], rep["jobs"], rep["follow"]
    span = sub["span_s"]
    lines = [
        f"submission (last rep): {jobs['submitted']} accepted over {span:.3f} s; retried "
        f"{sub['throttled']} x 429, {sub['server_errors']} x 5xx; {jobs['unknown']} unknown, "
        f"{jobs['rejected']} rejected"
        if span is not None
        else "no job was accepted",
        f"health (last rep): max {rep['health']['max_in_queue']} queued, "
        f"max {rep['health']['max_workers_running']} workers running",
    ]
    gap = follow["terminal_uncertainty"]
    if gap:
        lines.append(
            f"terminal times are client-observed, late by up to {gap['p50']:.3f} s "
            f"(p50) / {gap['max']:.3f} s (max)"
        )
    return lines


def render_live(doc: dict[str, Any], console: Any, saved_to: str) -> None:
    from jobbench.render.terminal import scenario_table

    console = console or stdout_console()
    for entry in doc["scenarios"]:
        console.print(scenario_table(entry))
        for line in footer_lines(entry):
            console.print(line, style="dim", highlight=False)
        console.print()
    console.print(f"target {doc['target']['endpoint']} (live)", highlight=False)
    console.print(f"saved {saved_to}")
