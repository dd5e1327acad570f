"""Cost curve: how the harness's cost grows with workers (1 to 64) and burst size (1k to 1M jobs).

Each cell of the grid is one real `jobbench run` of model workers (take-ahead 32, 32 slots) on
the embedded fake queue, with jobs and latencies so short (0.02 s jobs, take and wake 5 ms, hold
2 s) that the harness, not the model, is the bottleneck: the cell's jobs/s is the harness's
ceiling at that size. From the cell's result (medians over its reps): jobs/s; the overhead, the
measured time to 99 % minus the simulated one for the same scenario (the run's `predicted`, or
`jobbench run --target sim` where the run predicts none, over 200,000 jobs); the CPU of the
queue, of the workers (summed), of the machine and of its other processes (the reps' `harness`
blocks) and whether a rep was flagged saturated; the peak RSS of the queue (its VmHWM) and of
the workers together (their summed RSS, sampled every 0.2 s); the cell's wall time and the load
average before and after it.

The JSON (`--out`) is written after every cell, so an interrupted grid loses at most the cell
that was running: `--resume` continues it (and, with nothing left to run, only rewrites the
plot and prints the table). At the end: a Markdown table for docs/performance.md and an SVG
(`--plot`): jobs/s against workers, one line per burst; overhead and the queue's peak RSS
against burst size, one line per worker count.

    .venv/bin/python benchmarks/cost_curve.py                     # the whole grid: ~2 h on 2 cores
    .venv/bin/python benchmarks/cost_curve.py --resume            # continue it after a stop
    .venv/bin/python benchmarks/cost_curve.py --resume --cells 64:1000000,1:1000000
    .venv/bin/python benchmarks/cost_curve.py --workers 1,2 --bursts 1000,2000 --reps 1 \\
        --out /tmp/cost_curve.json --plot /tmp/cost_curve.svg    # a smoke test, ~15 s
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from types import FrameType
from typing import Any

import psutil
from common import machine, print_machine

from jobbench.procs.groups import signal_group
from jobbench.render.page.svg import nice_step, polyline_d
from jobbench.render.page.svg import num as n

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = "jobbench.cost_curve/1"
WORKERS = (1, 2, 4, 8, 16, 32, 64)
BURSTS = (1_000, 10_000, 100_000, 1_000_000)
REPS = 3
# The scenario of every cell but its workers, burst and reps (docs/performance.md, "The
# harness's own cost"): short jobs and latencies, so the harness is what limits jobs/s.
SETTINGS: dict[str, Any] = {
    "worker": "model",
    "policy": "take-ahead",
    "take_ahead": 32,
    "slots": 32,
    "job_seconds": 0.02,
    "take_latency": 0.005,
    "wake_latency": 0.005,
    "hold": 2.0,
}
SAMPLE_PERIOD_S = 0.2
STOP_GRACE_S = 20.0  # jobbench stops its queue and workers on SIGTERM (3-5 s each at most)
KILL_WAIT_S = 5.0
LOG_TAIL_CHARS = 2000


# ---- signals and child processes ----------------------------------------------------------
def _interrupt(signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends (a cleanup must not be cut short)."""
    got: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        got.append(signum)

    old = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if got:
            raise KeyboardInterrupt(f"signal {got[0]}")


def stop_child(proc: subprocess.Popen[bytes], seen: Sequence[psutil.Process] = ()) -> None:
    """Stop a child that leads its own process group, and every process it started.

    The queue and the workers of a `jobbench run` lead groups of their own, so a signal to
    jobbench's group does not reach them: jobbench is asked first (SIGTERM: it stops them and
    exits 130), then its group is killed, then any of `seen` (the sampler's) still alive."""
    with interrupts_deferred():
        if proc.poll() is None:
            signal_group(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(STOP_GRACE_S)
        if proc.poll() is None:
            signal_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(KILL_WAIT_S)
        for child in seen:
            with contextlib.suppress(psutil.Error, OSError):
                if child.is_running():  # psutil compares the start time: not a reused pid
                    if os.getpgid(child.pid) == child.pid:
                        signal_group(child.pid, signal.SIGKILL)
                    else:
                        child.kill()


def run_child(argv: list[str], log: Path, sampler: Sampler | None = None) -> int:
    """Run `argv` in its own session, output to `log`; its exit code. Nothing it started is
    left behind on any exit path (Ctrl-C, SIGTERM, an error here)."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "CI": "true"},
            start_new_session=True,
        )
        try:
            if sampler is not None:
                sampler.attach(proc.pid)
                sampler.start()
            return proc.wait()
        finally:
            if sampler is not None:
                sampler.stop()
            stop_child(proc, sampler.processes() if sampler is not None else ())


def log_tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-LOG_TAIL_CHARS:]
    except OSError:
        return ""


# ---- memory ---------------------------------------------------------------------------------
def rss_hwm_kib(pid: int) -> tuple[int, int] | None:
    """(VmRSS, VmHWM) of a live process in KiB; None: gone, or a zombie."""
    rss = hwm = None
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
    return None if rss is None or hwm is None else (rss, hwm)


def kind_of(process: psutil.Process, parent_cmd: list[str]) -> str | None:
    """queue, worker or other; None while it cannot be told (a fork of jobbench not yet
    exec'd still shows jobbench's command line)."""
    try:
        cmd = process.cmdline()
    except psutil.Error:
        return None
    if cmd == parent_cmd:
        return None
    text = " ".join(cmd)
    if "fake_queue" in text:
        return "queue"
    if "policy_worker" in text:
        return "worker"
    return "other"


@dataclass
class Sampler:
    """Samples, every SAMPLE_PERIOD_S in a thread, the processes under one jobbench run: the
    queue's peak RSS (its VmHWM, exact between samples), the peak of the workers' summed RSS,
    the largest worker's VmHWM and jobbench's own VmHWM. Processes are found with psutil."""

    root_pid: int = 0
    queue_kib: int = 0
    workers_kib: int = 0
    largest_worker_kib: int = 0
    driver_kib: int = 0
    samples: int = 0
    cpu_s: float = 0.0
    kinds: dict[int, tuple[str, psutil.Process]] = field(default_factory=dict)
    _done: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def attach(self, pid: int) -> None:
        self.root_pid = pid

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def processes(self) -> list[psutil.Process]:
        return [process for _, process in self.kinds.values()]

    def _run(self) -> None:
        try:
            root = psutil.Process(self.root_pid)
            root_cmd = root.cmdline()
        except psutil.Error:
            return
        while True:
            self._sample(root, root_cmd)
            if self._done.wait(SAMPLE_PERIOD_S):
                break
        self.cpu_s = time.thread_time()

    def _sample(self, root: psutil.Process, root_cmd: list[str]) -> None:
        try:
            children = root.children(recursive=True)
        except psutil.Error:
            return
        for child in children:
            known = self.kinds.get(child.pid)
            if known is None or known[1] != child:  # new, or the pid was reused
                kind = kind_of(child, root_cmd)
                if kind is not None:
                    self.kinds[child.pid] = (kind, child)
        workers = 0
        for pid, (kind, _) in list(self.kinds.items()):
            got = rss_hwm_kib(pid)
            if got is None:
                continue
            rss, hwm = got
            if kind == "queue":
                self.queue_kib = max(self.queue_kib, hwm)
            elif kind == "worker":
                workers += rss
                self.largest_worker_kib = max(self.largest_worker_kib, hwm)
        self.workers_kib = max(self.workers_kib, workers)
        own = rss_hwm_kib(self.root_pid)
        if own is not None:
            self.driver_kib = max(self.driver_kib, own[1])
        self.samples += 1

    def figures(self) -> dict[str, Any]:
        seen = [kind for kind, _ in self.kinds.values()]
        return {
            "queue_rss_peak_mb": round(self.queue_kib / 1024, 1) if self.queue_kib else None,
            "workers_rss_peak_mb": round(self.workers_kib / 1024, 1) if self.workers_kib else None,
            "largest_worker_rss_peak_mb": round(self.largest_worker_kib / 1024, 1)
            if self.largest_worker_kib
            else None,
            "driver_rss_peak_mb": round(self.driver_kib / 1024, 1) if self.driver_kib else None,
            "worker_processes_seen": seen.count("worker"),
            "rss_samples": self.samples,
            "sampler_cpu_s": round(self.cpu_s, 3),
        }


# ---- one cell -------------------------------------------------------------------------------
def scenario_flags(workers: int | str, burst: int | str) -> list[str]:
    s = SETTINGS
    return [
        *("--worker", s["worker"], "--policy", s["policy"], "--take-ahead", str(s["take_ahead"])),
        *("-w", str(workers), "-s", str(s["slots"]), "--burst", str(burst)),
        *("--job-seconds", f"{s['job_seconds']:g}", "--take-latency", f"{s['take_latency']:g}"),
        *("--wake-latency", f"{s['wake_latency']:g}", "--hold", f"{s['hold']:g}"),
    ]


def harness_argv(workers: int | str, burst: int | str, reps: int, out: str) -> list[str]:
    return [
        *("python", "-m", "jobbench", "run", *scenario_flags(workers, burst)),
        *("--reps", str(reps), "--out", out, "--no-events", "--quiet"),
    ]


def sim_argv(workers: int, burst: int, out: str) -> list[str]:
    return [
        *("python", "-m", "jobbench", "run", "--target", "sim", *scenario_flags(workers, burst)),
        *("--reps", "1", "--out", out, "--no-events", "--quiet"),
    ]


def executable(argv: list[str]) -> list[str]:
    return [sys.executable, *argv[1:]] if argv[0] == "python" else argv


def median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def simulated_p99(workers: int, burst: int, folder: Path) -> float | None:
    """Time to 99 % of the cell's scenario simulated in virtual time (`--target sim`): the
    run's own `predicted` stops at 200,000 jobs."""
    out = folder / "sim"
    code = run_child(executable(sim_argv(workers, burst, str(out))), folder / "sim.log")
    if code != 0:
        print(f"  simulation failed (exit {code}): {log_tail(folder / 'sim.log')}", flush=True)
        return None
    doc = json.loads((out / "run.json").read_text())
    reps = doc["scenarios"][0]["reps"]
    return float(reps[0]["time_to_p99_s"]) if reps else None


def rep_figures(index: int, rep: dict[str, Any], predicted: float | None) -> dict[str, Any]:
    harness = rep.get("harness") or {}
    workers = harness.get("worker_cores") or {}
    known = [v for v in workers.values() if v is not None]
    p99 = rep.get("time_to_p99_s")
    overhead = None if p99 is None or predicted is None else (p99 - predicted) * 1000
    anomalies = rep.get("anomalies") or []
    return {
        "rep": index,
        "throughput_jps": rep.get("throughput_jps"),
        "time_to_p99_s": p99,
        "time_to_p100_s": rep.get("time_to_p100_s"),
        "efficiency": rep.get("efficiency"),
        "overhead_ms": rounded(overhead, 1),
        "queue_cores": harness.get("queue_cores"),
        "worker_cores": round(sum(known), 3) if known else None,
        "driver_cores": harness.get("driver_cores"),
        "others_cores": harness.get("others_cores"),
        "machine_busy_cores": harness.get("machine_busy_cores"),
        "saturated": any(a.get("kind") == "saturated" for a in anomalies),
        "anomalies": anomalies,
        "jobs": rep.get("jobs"),
        "harness": rep.get("harness"),
        "machine": rep.get("machine"),
    }


def run_cell(workers: int, burst: int, reps: int) -> dict[str, Any]:
    command = shlex.join(harness_argv(workers, burst, reps, "DIR"))
    cell: dict[str, Any] = {
        "key": f"{workers}:{burst}",
        "workers": workers,
        "burst": burst,
        "reps_asked": reps,
        "command": command,
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "loadavg_before": load_avg(),
    }
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="jb-cost-") as tmp:
        folder = Path(tmp)
        sampler = Sampler()
        argv = executable(harness_argv(workers, burst, reps, str(folder / "out")))
        code = run_child(argv, folder / "jobbench.log", sampler)
        harness_wall = time.monotonic() - began
        cell["loadavg_after"] = load_avg()
        cell.update(sampler.figures())
        result = folder / "out" / "run.json"
        if code != 0 or not result.exists():
            cell["error"] = f"jobbench exited {code}: {log_tail(folder / 'jobbench.log')}"
            cell["wall_s"] = round(harness_wall, 2)
            return cell
        scenario = json.loads(result.read_text())["scenarios"][0]
        predicted = (scenario.get("predicted") or {}).get("time_to_p99_s")
        source = "predicted (jobbench run)"
        if predicted is None:
            predicted, source = simulated_p99(workers, burst, folder), "jobbench run --target sim"
    cell["wall_s"] = round(harness_wall, 2)
    cell["wall_with_simulation_s"] = round(time.monotonic() - began, 2)
    rows = [rep_figures(i, rep, predicted) for i, rep in enumerate(scenario["reps"], start=1)]

    def med(key: str, digits: int) -> float | None:
        return rounded(median([r[key] for r in rows]), digits)

    cell.update(
        {
            "reps_done": len(rows),
            "ideal_s": scenario.get("ideal_s"),
            "predicted_time_to_p99_s": predicted,
            "predicted_source": source if predicted is not None else None,
            "throughput_jps": med("throughput_jps", 1),
            "time_to_p99_s": med("time_to_p99_s", 4),
            "overhead_ms": med("overhead_ms", 1),
            "queue_cores": med("queue_cores", 3),
            "worker_cores": med("worker_cores", 3),
            "driver_cores": med("driver_cores", 3),
            "others_cores": med("others_cores", 3),
            "others_cores_max": max(
                (r["others_cores"] for r in rows if r["others_cores"] is not None), default=None
            ),
            "machine_busy_cores": med("machine_busy_cores", 3),
            "saturated": any(r["saturated"] for r in rows),
            "saturated_reps": [r["rep"] for r in rows if r["saturated"]],
            "anomaly_kinds": sorted({a.get("kind", "?") for r in rows for a in r["anomalies"]}),
            "all_completed": all(
                (r["jobs"] or {}).get("completed") == (r["jobs"] or {}).get("submitted")
                for r in rows
            ),
            "reps": rows,
        }
    )
    return cell


# ---- the output document --------------------------------------------------------------------
def settings(reps: int) -> dict[str, Any]:
    return {**SETTINGS, "reps": reps}


def new_document(reps: int) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "machine": machine(),
        "settings": settings(reps),
        "harness_command": shlex.join(harness_argv("W", "B", reps, "DIR")),
        "invocations": [],
        "cells": [],
    }


def load_document(path: Path, reps: int) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    if doc.get("schema") != SCHEMA:
        raise SystemExit(f"{path}: not a cost curve ({SCHEMA})")
    if doc.get("settings") != settings(reps):
        raise SystemExit(
            f"{path} was measured with {doc.get('settings')}, this run asks {settings(reps)}: "
            "pass the same --reps, or another --out"
        )
    return doc


def save_document(doc: dict[str, Any], path: Path) -> None:
    """Atomically: an interruption while writing leaves the previous file whole."""
    doc["cells"].sort(key=lambda c: (c["burst"], c["workers"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)


# ---- the table ------------------------------------------------------------------------------
def fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{suffix}"


def flagged(cell: dict[str, Any]) -> str:
    if "error" in cell:
        return "failed"
    if not cell.get("saturated"):
        return "no"
    return f"saturated ({len(cell['saturated_reps'])}/{cell['reps_done']})"


def markdown_table(cells: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| workers | burst | jobs/s | overhead ms | queue cores | worker cores | queue RSS MB "
        "| workers RSS MB | flagged |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        lines.append(
            f"| {c['workers']} | {c['burst']:,} | {fmt(c.get('throughput_jps'), ',.0f')} "
            f"| {fmt(c.get('overhead_ms'), '+,.0f')} | {fmt(c.get('queue_cores'), '.2f')} "
            f"| {fmt(c.get('worker_cores'), '.2f')} | {fmt(c.get('queue_rss_peak_mb'), '.0f')} "
            f"| {fmt(c.get('workers_rss_peak_mb'), '.0f')} | {flagged(c)} |"
        )
    return "\n".join(lines)


# ---- the plot (a standalone SVG: linear or log axes, lines, markers, legends) --------------
# Its own colours and style, not the report page's CSS classes: the file is shown on its own
# (docs/performance.md). The tick step and a line's path are render/page/svg.py's.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
FONT_PX = 12
CHAR_PX = 6.8  # a generous glyph width at FONT_PX, for laying out legends


def svg_text(x: float, y: float, body: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{n(x)}" y="{n(y)}" text-anchor="{anchor}"{extra}>{escape(body)}</text>'


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def short_count(value: float) -> str:
    for size, unit in ((1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:g}{unit}"
    return f"{value:g}"


@dataclass(frozen=True)
class Axis:
    lo: float
    hi: float
    log: bool
    ticks: tuple[float, ...]
    label: Callable[[float], str]

    def frac(self, value: float) -> float:
        if self.log:
            lo, hi, value = math.log10(self.lo), math.log10(self.hi), math.log10(value)
        else:
            lo, hi = self.lo, self.hi
        return (value - lo) / ((hi - lo) or 1.0)


def linear_axis(values: Sequence[float], label: Callable[[float], str]) -> Axis:
    lo, hi = min(0.0, *values), max(values)
    if hi <= lo:
        hi = lo + 1.0
    step = nice_step(hi - lo, 5)
    first = math.floor(lo / step) * step
    count = math.ceil((hi - first) / step - 1e-9)
    ticks = tuple(round(first + i * step, 10) for i in range(count + 1))
    return Axis(ticks[0], ticks[-1], False, ticks, label)


def log_axis(values: Sequence[float], label: Callable[[float], str], base: int = 10) -> Axis:
    """Ticks at the powers of `base` around the values (2: 1, 2, 4 ... for worker counts)."""
    lo_exp = math.floor(math.log(min(values), base) + 1e-9)
    hi_exp = math.ceil(math.log(max(values), base) - 1e-9)
    if hi_exp == lo_exp:
        lo_exp, hi_exp = lo_exp - 1, hi_exp + 1
    ticks = tuple(float(base**e) for e in range(lo_exp, hi_exp + 1))
    return Axis(ticks[0], ticks[-1], True, ticks, label)


Series = dict[str, list[tuple[float, float, bool]]]  # label: (x, y, open marker)


@dataclass(frozen=True)
class Panel:
    title: str
    x_title: str
    y_title: str
    series: Series
    x_base: int  # log base of the x axis
    y_log: bool  # log y where every value is positive and they span 2 decades or more
    y_label: Callable[[float], str]


def panel_svg(p: Panel, left: float, top: float, width: float, height: float) -> str:
    """One framed plot: title, grid, ticks, axis titles, a line and markers per series."""
    points = [pt for pts in p.series.values() for pt in pts]
    if not points:
        return svg_text(left + width / 2, top + height / 2, f"{p.title}: no data", "middle")
    xs, ys = [x for x, _, _ in points], [y for _, y, _ in points]
    x_axis = log_axis(xs, short_count, p.x_base)
    wide = min(ys) > 0 and max(ys) / min(ys) >= 100
    y_axis = log_axis(ys, p.y_label) if p.y_log and wide else linear_axis(ys, p.y_label)
    pad_l, pad_b, pad_t = 66.0, 42.0, 24.0
    x0, x1, y0, y1 = left + pad_l, left + width - 8, top + height - pad_b, top + pad_t

    def px(x: float) -> float:
        return x0 + x_axis.frac(x) * (x1 - x0)

    def py(y: float) -> float:
        return y0 - y_axis.frac(y) * (y0 - y1)

    hidden = sum(1 for pt in points if y_axis.log and pt[1] <= 0)
    title = f"{p.title} ({hidden} at or below 0 not shown)" if hidden else p.title
    out = [svg_text(x0, top + 14, title, extra=' font-weight="bold"')]
    for t in y_axis.ticks:
        out.append(f'<path class="grid" d="M{n(x0)} {n(py(t))}H{n(x1)}"/>')
        out.append(svg_text(x0 - 6, py(t) + 4, y_axis.label(t), "end"))
    for t in x_axis.ticks:
        out.append(f'<path class="grid" d="M{n(px(t))} {n(y1)}V{n(y0)}"/>')
        out.append(svg_text(px(t), y0 + 16, x_axis.label(t), "middle"))
    out.append(f'<path class="ax" d="M{n(x0)} {n(y1)}V{n(y0)}H{n(x1)}"/>')
    out.append(svg_text((x0 + x1) / 2, y0 + 34, p.x_title, "middle"))
    mid = (y0 + y1) / 2
    out.append(
        f'<text transform="translate({n(left + 14)} {n(mid)}) rotate(-90)" '
        f'text-anchor="middle">{escape(p.y_title)}</text>'
    )
    for index, pts in enumerate(p.series.values()):
        colour = PALETTE[index % len(PALETTE)]
        shown = sorted(pt for pt in pts if not (y_axis.log and pt[1] <= 0))
        if len(shown) > 1:
            d = polyline_d([(px(x), py(y)) for x, y, _ in shown])
            out.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y, hollow in shown:
            fill = "#fff" if hollow else colour
            out.append(
                f'<circle cx="{n(px(x))}" cy="{n(py(y))}" r="3.5" fill="{fill}" '
                f'stroke="{colour}" stroke-width="1.5"/>'
            )
    return "".join(out)


def legend_svg(labels: Sequence[str], title: str, left: float, top: float, width: float) -> str:
    out = [svg_text(left, top + 4, title)]
    x, y = left + len(title) * CHAR_PX + 10, top
    for index, label in enumerate(labels):
        w = 26 + len(label) * CHAR_PX + 14
        if x + w > left + width:
            x, y = left + len(title) * CHAR_PX + 10, y + 18
        colour = PALETTE[index % len(PALETTE)]
        out.append(f'<path d="M{n(x)} {n(y)}h18" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<circle cx="{n(x + 9)}" cy="{n(y)}" r="3.5" fill="{colour}"/>')
        out.append(svg_text(x + 24, y + 4, label))
        x += w
    return "".join(out)


def plot_svg(doc: dict[str, Any]) -> str:
    cells = [c for c in doc["cells"] if "error" not in c]
    bursts = sorted({c["burst"] for c in cells})
    workers = sorted({c["workers"] for c in cells})

    def series(by: str, values: Sequence[int], x: str, y: str, scale: float = 1.0) -> Series:
        out: Series = {}
        for value in values:
            out[str(value)] = [
                (float(c[x]), float(c[y]) * scale, bool(c["saturated"]))
                for c in cells
                if c[by] == value and c.get(y) is not None
            ]
        return out

    by_burst = {
        f"{int(b):,} jobs": pts
        for b, pts in series("burst", bursts, "workers", "throughput_jps").items()
    }
    panels = [
        Panel(
            "Jobs/s against workers",
            "workers (x 32 slots)",
            "jobs/s (median of reps)",
            by_burst,
            2,
            False,
            lambda v: f"{v:,.0f}",
        ),
        Panel(
            "Overhead against burst",
            "burst (jobs)",
            "time to 99 % over simulated (ms)",
            series("workers", workers, "burst", "overhead_ms"),
            10,
            True,
            lambda v: short_count(v) if v >= 1 or v <= 0 else f"{v:g}",
        ),
        Panel(
            "Queue peak RSS against burst",
            "burst (jobs)",
            "queue peak RSS (MB)",
            series("workers", workers, "burst", "queue_rss_peak_mb"),
            10,
            False,
            lambda v: f"{v:,.0f}",
        ),
    ]
    pw, ph, top = 390.0, 320.0, 52.0
    width, height = pw * 3 + 20, top + ph + 56
    s = doc["settings"]
    m = doc["machine"]
    subtitle = (
        f"jobbench run, {s['worker']} worker, {s['policy']} {s['take_ahead']}, {s['slots']} slots, "
        f"{s['job_seconds']:g} s jobs, take/wake {s['take_latency'] * 1000:g}/"
        f"{s['wake_latency'] * 1000:g} ms, hold {s['hold']:g} s, {plural(s['reps'], 'rep')} "
        f"(medians); {m.get('nproc')} CPUs, {m.get('cpu')}; open marker: a rep flagged saturated"
    )
    body = [
        svg_text(
            10,
            20,
            "The harness's cost: jobs/s, overhead and queue memory",
            extra=' font-size="15" font-weight="bold"',
        ),
        svg_text(10, 38, subtitle, extra=' font-size="11"'),
    ]
    for index, p in enumerate(panels):
        body.append(panel_svg(p, 10 + index * pw, top, pw - 10, ph))
    legend_top = top + ph + 18
    body.append(legend_svg(list(by_burst), "burst:", 10 + 62, legend_top, pw - 72))
    body.append(
        legend_svg([str(w) for w in workers], "workers:", 10 + pw + 62, legend_top, 2 * pw - 80)
    )
    style = (
        f"text{{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;font-size:{FONT_PX}px;"
        "fill:#222}.grid{stroke:#ddd;stroke-width:1;fill:none}"
        ".ax{stroke:#444;stroke-width:1.2;fill:none}"
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{n(width)}" height="{n(height)}" '
        f'viewBox="0 0 {n(width)} {n(height)}"><style>{style}</style>'
        f'<rect width="100%" height="100%" fill="#fff"/>{"".join(body)}</svg>\n'
    )


# ---- main -----------------------------------------------------------------------------------
def numbers(text: str) -> list[int]:
    return [int(part.replace("_", "")) for part in text.split(",") if part.strip()]


def cell_list(text: str) -> list[tuple[int, int]]:
    try:
        pairs = [part.split(":") for part in text.split(",") if part.strip()]
        return [(int(w.replace("_", "")), int(b.replace("_", ""))) for w, b in pairs]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected W:B,W:B (e.g. 4:1000,64:1000000), got {text!r}"
        ) from None


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--workers", type=numbers, default=list(WORKERS), help="comma-separated")
    p.add_argument("--bursts", type=numbers, default=list(BURSTS), help="comma-separated jobs")
    p.add_argument("--reps", type=int, default=REPS, help="reps per cell (figures: medians)")
    p.add_argument("--cells", type=cell_list, help="only these cells, W:B,W:B (not the grid)")
    p.add_argument(
        "--resume", action="store_true", help="continue --out: skip the cells already in it"
    )
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "data" / "cost_curve.json")
    p.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "cost_curve.svg")
    args = p.parse_args()
    sizes = [*args.workers, *args.bursts, *(x for cell in args.cells or () for x in cell)]
    if args.reps < 1 or not sizes or min(sizes) < 1:
        p.error("--reps, --workers, --bursts and --cells must be positive")
    return args


def main() -> int:
    args = parse_args()
    signal.signal(signal.SIGTERM, _interrupt)  # like Ctrl-C: every child is stopped
    if args.out.exists() and not args.resume:
        print(f"{args.out} exists: --resume to continue it, or another --out", file=sys.stderr)
        return 2
    doc = load_document(args.out, args.reps) if args.resume else new_document(args.reps)
    grid = args.cells or [(w, b) for b in args.bursts for w in args.workers]
    grid = sorted(dict.fromkeys(grid), key=lambda wb: (wb[1], wb[0]))
    done = {c["key"] for c in doc["cells"] if "error" not in c}
    todo = [(w, b) for w, b in grid if f"{w}:{b}" not in done]
    print_machine()
    print(f"{len(grid)} cells, {len(todo)} to run, {len(grid) - len(todo)} already in {args.out}")
    doc["invocations"].append(
        {
            "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "argv": [Path(sys.argv[0]).name, *sys.argv[1:]],
            "loadavg": load_avg(),
            "cells": [f"{w}:{b}" for w, b in todo],
        }
    )
    failed = 0
    try:
        for index, (w, b) in enumerate(todo, start=1):
            print(
                f"[{index}/{len(todo)}] cell {w}:{b} ({plural(w, 'worker')} x {b:,} jobs, "
                f"{plural(args.reps, 'rep')}): start, load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
            cell = run_cell(w, b, args.reps)
            doc["cells"] = [c for c in doc["cells"] if c["key"] != cell["key"]] + [cell]
            save_document(doc, args.out)
            if "error" in cell:
                failed += 1
                print(
                    f"[{index}/{len(todo)}] cell {w}:{b}: FAILED after {cell['wall_s']:.1f} s:"
                    f" {cell['error']}",
                    flush=True,
                )
                continue
            print(
                f"[{index}/{len(todo)}] cell {w}:{b}: done in {cell['wall_s']:.1f} s: "
                f"{fmt(cell['throughput_jps'], ',.0f')} jobs/s, overhead "
                f"{fmt(cell['overhead_ms'], '+,.0f', ' ms')}, queue "
                f"{fmt(cell['queue_cores'], '.2f')} cores, flagged {flagged(cell)}",
                flush=True,
            )
    except KeyboardInterrupt:
        save_document(doc, args.out)
        print(
            f"interrupted: {len(doc['cells'])} cells saved in {args.out}; --resume continues",
            file=sys.stderr,
        )
        return 130
    save_document(doc, args.out)
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    args.plot.write_text(plot_svg(doc))
    print(f"wrote {args.out} and {args.plot}")
    print()
    print(markdown_table(doc["cells"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
