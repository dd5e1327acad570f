"""Shared helpers for the benchmark scripts: the machine, a server process, events, statistics.

Every benchmark starts `python -m fake_queue` (or a variant launcher) as its own process on
127.0.0.1, port 0, and talks to it only over loopback. Clocks: the server stamps events with
`time.monotonic_ns()`, which is CLOCK_MONOTONIC and therefore shared by every process on the
machine, so client-side and server-side times can be compared directly.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.request import Request, urlopen

ROOT = Path(__file__).resolve().parent.parent
READY_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 5.0


# ---- the machine ---------------------------------------------------------------------------
def machine() -> dict[str, str]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return {
        "fake_queue": _git_state(),
        "nproc": str(os.cpu_count()),
        "cpu": model,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "kernel": platform.release(),
        "loadavg (1/5/15 min) at start": load,
    }


def _git_state() -> str:
    """The commit the measured fake_queue/ comes from, and whether it has local edits."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            text=True,
            capture_output=True,
            timeout=5,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "fake_queue"],
            cwd=ROOT,
            text=True,
            capture_output=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git)"
    return f"git {sha or 'unknown'}{' + local edits' if dirty else ''}"


def print_machine() -> None:
    print("machine:")
    for key, value in machine().items():
        print(f"  {key}: {value}")


# ---- the server process --------------------------------------------------------------------
@dataclass
class ServerProcess:
    proc: subprocess.Popen[str]
    url: str
    endpoint_url: str

    @property
    def pid(self) -> int:
        return self.proc.pid


@contextmanager
def server_process(
    args: Sequence[str], launcher: Sequence[str] | None = None
) -> Iterator[ServerProcess]:
    """Start the fake queue on 127.0.0.1 port 0 in its own process; stop it on exit.

    `launcher` replaces `python -m fake_queue` (e.g. a benchmark-only variant); it must accept
    the same flags and print the same ready line."""
    cmd = list(launcher or [sys.executable, "-m", "fake_queue"])
    if cmd[0] == "python":
        cmd[0] = sys.executable
    cmd += ["--host", "127.0.0.1", "--port", "0", "--ready-json", *args]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        ready = _read_ready(proc)
        yield ServerProcess(proc, ready["url"], ready["endpoint_url"])
    finally:
        _stop(proc)


def _read_ready(proc: subprocess.Popen[str]) -> dict[str, str]:
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if sel.select(timeout=0.2):
            line = proc.stdout.readline()
            if line.startswith("{"):
                return dict(json.loads(line))
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            raise RuntimeError(f"server exited with {proc.returncode}: {err[-2000:]}")
    raise RuntimeError(f"server not ready within {READY_TIMEOUT_S} s")


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(STOP_TIMEOUT_S)


# ---- bench-control HTTP (blocking, stdlib only) ----------------------------------------------
def http_json(method: str, url: str, body: Any = None, timeout: float = 60.0) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"} if data else {}
    )
    with urlopen(req, timeout=timeout) as resp:  # loopback only
        raw = resp.read()
    return json.loads(raw) if raw else None


def burst(url: str, count: int, job_input: Any = None) -> dict[str, Any]:
    return dict(
        http_json(
            "POST",
            f"{url}/_bench/burst",
            {"count": count, "input": {} if job_input is None else job_input},
        )
    )


def state(url: str) -> dict[str, Any]:
    return dict(http_json("GET", f"{url}/_bench/state"))


def all_events(url: str, cursor: int = 0, page: int = 50_000) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    while True:
        got = http_json("GET", f"{url}/_bench/events?cursor={cursor}&limit={page}")
        events += got["events"]
        if not got["events"]:
            return events
        cursor = got["next"]


# ---- /proc ----------------------------------------------------------------------------------
def vm_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def system_busy_seconds() -> tuple[float, float]:
    """(busy, steal) CPU seconds of the whole machine since boot, summed over all CPUs."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    ticks = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq) / ticks, steal / ticks


class CpuMeter:
    """CPU used on the machine during a run, split into ours (the given pids) and others'.

    The machine is shared: other users' tests can run while a benchmark does, and the figures
    mean little without knowing how much CPU was left for it."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.busy0, self.steal0 = system_busy_seconds()
        self.ours0: dict[int, float] = {}

    def track(self, pid: int) -> None:
        self.ours0[pid] = cpu_seconds(pid)

    def stop(self) -> dict[str, float]:
        wall = time.monotonic() - self.started
        busy, steal = system_busy_seconds()
        ours = sum(cpu_seconds(pid) - c0 for pid, c0 in self.ours0.items())
        return {
            "wall_s": wall,
            "busy_cores": (busy - self.busy0) / wall,
            "ours_cores": ours / wall,
            "others_cores": max(0.0, busy - self.busy0 - ours) / wall,
            "steal_cores": (steal - self.steal0) / wall,
        }


def describe_cpu(m: dict[str, float]) -> str:
    return (
        f"CPU during the run ({m['wall_s']:.1f} s): machine busy {m['busy_cores']:.2f} "
        f"cores, this benchmark {m['ours_cores']:.2f}, other processes "
        f"{m['others_cores']:.2f}, steal {m['steal_cores']:.2f}"
    )


# ---- statistics -----------------------------------------------------------------------------
def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 100]."""
    if not sorted_values:
        return math.nan
    pos = (len(sorted_values) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def wilson(hits: int, n: int, scale: float = 1.0) -> tuple[float, float, float]:
    """The share and its Wilson 95 % interval, times `scale`."""
    if n == 0:
        return math.nan, math.nan, math.nan
    z, p = 1.96, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p * scale, max(0.0, centre - half) * scale, min(1.0, centre + half) * scale


def summary(values: Sequence[float]) -> dict[str, float]:
    s = sorted(values)
    return {
        "n": len(s),
        "median": percentile(s, 50),
        "p90": percentile(s, 90),
        "p99": percentile(s, 99),
        "max": s[-1] if s else math.nan,
        "min": s[0] if s else math.nan,
    }


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
        return str(value)

    cells = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def add_server_args(p: argparse.ArgumentParser, launcher_help: str = "") -> None:
    """--launcher and --server-arg, the same in every benchmark."""
    p.add_argument(
        "--launcher",
        default=None,
        help="command to run instead of `python -m fake_queue` (same flags)" + launcher_help,
    )
    p.add_argument(
        "--server-arg",
        action="append",
        default=[],
        help="extra flag for the server/launcher, repeatable",
    )


def launcher_argv(args: argparse.Namespace) -> list[str] | None:
    return shlex.split(args.launcher) if args.launcher else None
