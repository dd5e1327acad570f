"""The fault campaign (docs/reliability.md): every fault a run meets, injected as a user or a CI
runner would, each run of the real CLI with the embedded queue and real worker processes
(the runpod SDK and the model worker), and per case: the exit code against the one expected,
what the result says (complete, interrupted, error, partial reps, anomalies, faults counted),
jobs lost and doubled, processes left behind, and how long the run took to notice.

    python benchmarks/fault_campaign.py [--only NAME] [--json FILE]

A case survives when the exit code is the documented one, the result is saved and explains the
outcome (faults counted, lost jobs named, the stalled or dead worker named), no job was counted
twice and no process outlived the run. Exits 1 if any case did not survive.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine

FAST = ["--take-latency", "0.1", "--wake-latency", "0.01", "--hold", "2"]
MODEL = ["--worker", "model", "--policy", "drain"]
RUNPOD = ["--worker", "runpod"]
DETECT_WORDS = ("stalled", "made no take", "died", "lost by the workers", "error:")


@dataclass
class Watch:
    """A running case: its stderr lines with the time each came, its processes as seen."""

    proc: subprocess.Popen[str]
    lines: list[tuple[float, str]] = field(default_factory=list)
    seen: dict[int, psutil.Process] = field(default_factory=dict)
    acted_at: float | None = None

    def wait_line(self, text: str, timeout_s: float = 120) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.proc.poll() is None:
            if any(text in line for _, line in self.lines):
                return True
            time.sleep(0.05)
        return False

    def workers(self) -> list[psutil.Process]:
        """The worker processes (group leaders) under the run, w0 first."""
        found = []
        for child in psutil.Process(self.proc.pid).children(recursive=True):
            try:
                pod = child.environ().get("RUNPOD_POD_ID", "")
                if pod and child.pid == os.getpgid(child.pid):
                    found.append((pod, child))
            except (psutil.Error, ProcessLookupError):
                continue
        return [p for _, p in sorted(found, key=lambda item: item[0])]

    def queue(self) -> psutil.Process:
        for child in psutil.Process(self.proc.pid).children():
            if "fake_queue" in " ".join(child.cmdline()):
                return child
        raise RuntimeError("no embedded queue under the run")


Action = Callable[[Watch], None]


def after_rep(rep: int, then: Action) -> Action:
    def act(w: Watch) -> None:
        if w.wait_line(f"rep {rep}/"):
            time.sleep(0.3)
            w.acted_at = time.monotonic()
            then(w)

    return act


def stop_worker(resume_after: float | None = None, whole_group: bool = True) -> Action:
    def act(w: Watch) -> None:
        victim = w.workers()[0]
        if whole_group:
            os.killpg(victim.pid, signal.SIGSTOP)
        else:
            victim.suspend()  # the main process only: the SDK's heartbeat child pings on
        if resume_after is not None:
            time.sleep(resume_after)
            os.killpg(victim.pid, signal.SIGCONT)

    return act


def kill_worker(w: Watch) -> None:
    os.killpg(w.workers()[0].pid, signal.SIGKILL)


def kill_queue(w: Watch) -> None:
    w.queue().kill()


def signal_run(*sigs: signal.Signals) -> Action:
    def act(w: Watch) -> None:
        for sig in sigs:
            w.proc.send_signal(sig)
            time.sleep(0.3)

    return act


@dataclass
class Case:
    name: str
    args: list[str]
    expect: int
    action: Action | None = None
    expect_words: tuple[str, ...] = ()  # in the error or the stderr: the outcome explained
    server_faults: tuple[str, ...] = ()  # a separate `jobbench serve --fault ...`


def cases() -> list[Case]:
    small = ["--workers", "2", "--slots", "8", "--burst", "128", "--job-seconds", "0.2"]
    sdk = ["--workers", "2", "--slots", "8", "--burst", "96", "--job-seconds", "0.2"]
    q = "--fault"
    wf = "--worker-fault"
    return [
        Case(
            "job-done 500 x10% (model)",
            [*MODEL, *small, q, "job-done:500:0.1"],
            0,
            None,
            ("job-done:500",),
        ),
        Case(
            "job-done 500 x10% (sdk)",
            [*RUNPOD, *sdk, q, "job-done:500:0.1"],
            0,
            None,
            ("job-done:500",),
        ),
        Case(
            "job-done drop x5% (model)",
            [*MODEL, *small, q, "job-done:drop:0.05"],
            0,
            None,
            ("lost",),
        ),
        Case(
            "job-done drop x5% (sdk)", [*RUNPOD, *sdk, q, "job-done:drop:0.05"], 0, None, ("lost",)
        ),
        Case(
            "job-take drop x5% (model)",
            [*MODEL, *small, q, "job-take-batch:drop:0.05"],
            0,
            None,
            ("job-take-batch:drop",),
        ),
        Case(
            "job-take-batch 500 x20% (sdk)",
            [*RUNPOD, *sdk, q, "job-take-batch:500:0.2"],
            0,
            None,
            ("job-take-batch:500",),
        ),
        Case(
            "job-take-batch 429 x20% (sdk)",
            [*RUNPOD, *sdk, q, "job-take-batch:429:0.2"],
            0,
            None,
            ("job-take-batch:429",),
        ),
        Case("ping drop x100% (sdk)", [*RUNPOD, *sdk, q, "ping:drop:1"], 0, None, ()),
        Case(
            "job-done delay 1 s x10% (model)",
            [*MODEL, *small, q, "job-done:delay=1:0.1"],
            0,
            None,
            ("job-done:delay=1",),
        ),
        Case("every route 500 x5% (sdk)", [*RUNPOD, *sdk, q, "*:500:0.05"], 0, None, (":500",)),
        Case(
            "faults from serve, run --server",
            [*MODEL, *small],
            0,
            None,
            ("job-done:500",),
            ("job-done:500:0.1",),
        ),
        Case(
            "kill worker at 0.5 s (model)",
            [*MODEL, *small, wf, "kill:0.5:w1"],
            0,
            None,
            ("worker:kill",),
        ),
        Case(
            "kill worker at 1 s (sdk)", [*RUNPOD, *sdk, wf, "kill:1:w1"], 0, None, ("worker:kill",)
        ),
        Case(
            "pause worker 3 s (model)",
            [*MODEL, *small, wf, "pause:0.3:3:w0"],
            0,
            None,
            ("worker:pause",),
        ),
        Case(
            "pause worker 3 s (sdk)",
            [*RUNPOD, *sdk, wf, "pause:0.5:3:w0"],
            0,
            None,
            ("worker:pause",),
        ),
        Case(
            "SIGSTOP worker 8 s, resumed (model)",
            [*MODEL, *small],
            0,
            after_rep(1, stop_worker(8)),
            ("stalled",),
        ),
        Case(
            "SIGSTOP worker for good (model)",
            [*MODEL, *small],
            4,
            after_rep(1, stop_worker()),
            ("made no take",),
        ),
        Case(
            "SIGSTOP worker for good (sdk)",
            [*RUNPOD, *sdk],
            4,
            after_rep(1, stop_worker()),
            ("made no take",),
        ),
        Case(
            "SIGSTOP sdk main process, heartbeat on",
            [*RUNPOD, *sdk],
            4,
            after_rep(1, stop_worker(None, False)),
            ("made no take",),
        ),
        Case(
            "SIGKILL worker mid-rep (model)",
            [*MODEL, *small],
            4,
            after_rep(1, kill_worker),
            ("died",),
        ),
        Case(
            "SIGKILL worker mid-rep (sdk)", [*RUNPOD, *sdk], 4, after_rep(1, kill_worker), ("died",)
        ),
        Case("embedded queue killed", [*MODEL, *small], 4, after_rep(1, kill_queue), ("queue",)),
        Case(
            "SIGTERM to run (sdk)",
            [*RUNPOD, *sdk],
            130,
            after_rep(1, signal_run(signal.SIGTERM)),
            ("interrupted",),
        ),
        Case(
            "SIGINT twice to run (sdk)",
            [*RUNPOD, *sdk],
            130,
            after_rep(1, signal_run(signal.SIGINT, signal.SIGINT)),
            ("interrupted",),
        ),
    ]


def start_serve(faults: tuple[str, ...], folder: Path) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, "-m", "jobbench", "serve", "--port", "0", "--ready-json"]
    for rule in faults:
        argv += ["--fault", rule]
    serve = subprocess.Popen(argv, cwd=folder, stdout=subprocess.PIPE, text=True)
    assert serve.stdout is not None
    for line in serve.stdout:
        if line.startswith("{"):
            return serve, json.loads(line)["url"]
    raise RuntimeError("serve did not say it was ready")


def run_case(case: Case) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="campaign-"))
    serve = None
    args = ["run", *case.args, "--reps", "3", *FAST, "--out", str(folder / "reports")]
    if case.server_faults:
        serve, url = start_serve(case.server_faults, folder)
        args += ["--server", url]
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "jobbench", *args],
        cwd=folder,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "CI": "true"},
    )
    watch = Watch(proc)
    reader = threading.Thread(target=_read_stderr, args=(watch,), daemon=True)
    watcher = threading.Thread(target=_watch_processes, args=(watch,), daemon=True)
    reader.start()
    watcher.start()
    if case.action is not None:
        threading.Thread(target=case.action, args=(watch,), daemon=True).start()
    try:
        proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    took = time.monotonic() - began
    reader.join(5)
    if serve is not None:
        serve.send_signal(signal.SIGINT)
        serve.wait(10)
    time.sleep(5)  # what is still alive 5 s after the run ended is an orphan
    orphans = [p.pid for p in watch.seen.values() if _alive(p)]
    for pid in orphans:
        os.killpg(pid, signal.SIGKILL)
    return _outcome(case, watch, folder, took, orphans)


def _read_stderr(w: Watch) -> None:
    assert w.proc.stderr is not None
    for line in w.proc.stderr:
        w.lines.append((time.monotonic(), line.rstrip()))


def _watch_processes(w: Watch) -> None:
    while w.proc.poll() is None:
        try:
            for child in psutil.Process(w.proc.pid).children(recursive=True):
                w.seen.setdefault(child.pid, child)
        except psutil.Error:
            pass
        time.sleep(0.1)


def _alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _outcome(case: Case, w: Watch, folder: Path, took: float, orphans: list[int]) -> dict[str, Any]:
    path = folder / "reports" / "run.json"
    doc = json.loads(path.read_text()) if path.exists() else None
    reps = doc["scenarios"][0]["reps"] if doc and doc["scenarios"] else []
    stderr = "\n".join(line for _, line in w.lines)
    text = stderr + json.dumps(doc)
    lost = sum(rep["jobs"].get("lost") or 0 for rep in reps)
    named = all(len(rep.get("lost_jobs") or []) == (rep["jobs"].get("lost") or 0) for rep in reps)
    detect = None
    if w.acted_at is not None:
        later = [
            t for t, line in w.lines if t > w.acted_at and any(k in line for k in DETECT_WORDS)
        ]
        detect = round((later[0] if later else time.monotonic()) - w.acted_at, 1)
    explained = all(word in text for word in case.expect_words) and named
    survived = w.proc.returncode == case.expect and doc is not None and explained and not orphans
    error = (doc or {}).get("error") or ""
    return {
        "case": case.name,
        "exit": w.proc.returncode,
        "expected": case.expect,
        "saved": doc is not None,
        "complete": (doc or {}).get("complete"),
        "reps": len(reps),
        "lost": lost,
        "doubled": "counted twice" in text,
        "redelivered": sum(rep["jobs"].get("redelivered") or 0 for rep in reps),
        "faults": _faults(reps),
        "anomalies": sum(len(rep.get("anomalies") or []) for rep in reps),
        "orphans": len(orphans),
        "detect_s": detect,
        "seconds": round(took, 1),
        "survived": survived,
        "error": error[:120],
    }


def _faults(reps: list[dict[str, Any]]) -> str:
    total: dict[str, int] = {}
    for rep in reps:
        for kind, n in (rep.get("faults") or {}).items():
            total[kind] = total.get(kind, 0) + n
    return ", ".join(f"{k} {n}" for k, n in sorted(total.items())) or "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="run the cases whose name contains this")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    chosen = [c for c in cases() if not args.only or args.only in c.name]
    print(f"machine: {machine()}", flush=True)
    rows = []
    for case in chosen:
        row = run_case(case)
        rows.append(row)
        mark = "ok  " if row["survived"] else "FAIL"
        print(
            f"{mark} {row['case']}: exit {row['exit']} (want {row['expected']}), lost "
            f"{row['lost']}, faults {row['faults']}, anomalies {row['anomalies']}, orphans "
            f"{row['orphans']}, detect {row['detect_s']} s, {row['seconds']} s; {row['error']}",
            flush=True,
        )
    survived = sum(r["survived"] for r in rows)
    print(f"\nsurvived {survived}/{len(rows)}; orphans {sum(r['orphans'] for r in rows)}; "
          f"doubled {sum(r['doubled'] for r in rows)}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if survived == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
