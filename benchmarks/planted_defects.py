"""Planted defects in the real runpod SDK: does `jobbench gate` fail each one (exit 1) and pass a
comment-only commit (exit 0)? (docs/ci.md "Planted defects")

It clones a runpod-python repository into a throwaway folder, makes a branch `base` at v1.12.0
and one commit on top of it per defect a real pull request could bring, then gates each branch
against `base` with the real SDK worker on the fake queue, each on the one suite row where that
kind of defect shows (a burst, a trickle of long jobs, a queue that answers some takes 429):

    git clone https://github.com/runpod/runpod-python /tmp/runpod-python
    python benchmarks/planted_defects.py --sdk-repo /tmp/runpod-python

Nothing of the SDK is kept in jobbench: the branches live in the temporary folder, removed at
the end (--keep keeps it). Each gate runs with `--reps auto` and prints its own table; this
prints one line a defect and exits 1 unless every defect was caught and the comment passed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SCALE = "runpod/serverless/modules/rp_scale.py"
JOB = "runpod/serverless/modules/rp_job.py"


@dataclass(frozen=True)
class Defect:
    branch: str
    what: str
    file: str
    old: str  # the text of v1.12.0 the defect replaces (must be there exactly once)
    new: str
    suite: str  # the row it is gated on
    want: int  # the gate's exit code: 1 caught, 0 for the comment-only commit


DEFECTS = (
    Defect(
        "comment-only",
        "a comment-only commit",
        SCALE,
        "        tasks: Set[asyncio.Task] = set()\n",
        "        # The running tasks, by nothing but identity.\n"
        "        tasks: Set[asyncio.Task] = set()\n",
        "burst",
        0,
    ),
    Defect(
        "fail-5pct",
        "fails 5 % of jobs fast",
        JOB,
        "async def run_job(handler: Callable, job: Dict[str, Any]) -> Dict[str, Any]:\n",
        "async def run_job(handler: Callable, job: Dict[str, Any]) -> Dict[str, Any]:\n"
        "    if sum(job['id'].encode()) % 20 == 0:\n"
        "        return {'error': 'planted: failed fast'}\n"
        "    return await _run_job(handler, job)\n\n\n"
        "async def _run_job(handler: Callable, job: Dict[str, Any]) -> Dict[str, Any]:\n",
        "burst",
        1,
    ),
    Defect(
        "spin-a-core",
        "a thread spins a core",
        SCALE,
        "        tasks: Set[asyncio.Task] = set()\n",
        "        import threading\n\n"
        "        def spin() -> None:\n"
        "            while True:\n"
        "                pass\n\n"
        "        threading.Thread(target=spin, daemon=True).start()\n"
        "        tasks: Set[asyncio.Task] = set()\n",
        "burst",
        1,
    ),
    Defect(
        "start-on-finish",
        "a taken job starts only when a running one finishes",
        SCALE,
        "                    tasks, return_when=asyncio.FIRST_COMPLETED, timeout=0.1\n",
        "                    tasks, return_when=asyncio.FIRST_COMPLETED\n",
        "trickle",
        1,
    ),
    Defect(
        "stall-after-429",
        "stalls 12 s after a 429",
        SCALE,
        "                await asyncio.sleep(5)  # debounce for 5 seconds\n",
        "                await asyncio.sleep(12)  # debounce for 12 seconds\n",
        "rate-limited",
        1,
    ),
    Defect(
        "hoard",
        "every job to one worker (takes 32 x its free slots)",
        SCALE,
        "                    self.jobs_fetcher(session, jobs_needed),\n",
        "                    self.jobs_fetcher(session, jobs_needed * 32),\n",
        "burst",
        1,
    ),
)

# Real latencies (the platform's take and wake); the SDK's own ticks cannot be scaled.
SUITES = """
[suites.burst]
reps = 5
latency = { take = 0.5, wake = 0.05 }
scenarios = [{ name = "4w-256j-0.5s", workers = 4, slots = 16, burst = 256, job_seconds = 0.5 }]

[suites.trickle]
reps = 5
latency = { take = 0.5, wake = 0.05 }

[[suites.trickle.scenarios]]
name = "trickle-1w-2s"
workers = 1
slots = 8
job_seconds = 2.0
load = "poisson:1/s:for:20s"
metric = "steady_e2e_p99_s"

[suites.rate-limited]
reps = 5
latency = { take = 0.5, wake = 0.05 }
# The SDK's own 5 s debounce after a 429 is its design, not a stall; 8 s flags a longer one.
# A sleeping worker is seen stalled only while jobs stay queued: 128 jobs keep the other
# worker busy for about 16 s, so a sleep is seen in most reps, and a run of 429s can keep a
# worker silent past the watchdog's 32 s give-up, which ends the candidate's run: its own
# behaviour, a regression (64 jobs: stalls in 16 of 30 reps against 3, still inconclusive).
stall_after = 8
faults = ["job-take-batch:429:0.2"]
scenarios = [{ name = "2w-128j-429", workers = 2, slots = 8, burst = 128, job_seconds = 0.5 }]
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def clone_sdk(source: Path, sdk: Path, who: str) -> None:
    """A throwaway clone of a runpod-python repository that can commit (fix_branches.py too)."""
    subprocess.run(["git", "clone", "-q", str(source), str(sdk)], check=True)
    git(sdk, "config", "user.email", "bench@localhost")
    git(sdk, "config", "user.name", who)


def plant(sdk: Path, defect: Defect) -> None:
    git(sdk, "checkout", "-q", "-B", defect.branch, "base")
    path = sdk / defect.file
    text = path.read_text()
    if text.count(defect.old) != 1:
        raise SystemExit(f"{defect.branch}: {defect.file} no longer holds the line it changes")
    path.write_text(text.replace(defect.old, defect.new))
    git(sdk, "commit", "-q", "-am", f"planted: {defect.what}")


def gate(work: Path, defect: Defect, budget: str) -> tuple[int, str, float]:
    """One gate in a folder of its own: a result saved under a name (reports/base.json) would
    otherwise stand for that name in the next gate, instead of the git ref running again."""
    started = time.monotonic()
    folder = work / defect.branch
    folder.mkdir()
    (folder / "jobbench.toml").write_text(SUITES)
    done = subprocess.run(
        [sys.executable, "-m", "jobbench", "gate", "base", defect.branch, "--repo", "../sdk",
         "--suite", defect.suite, "--budget", budget, "--markdown", "gate.md"],
        cwd=folder, text=True, capture_output=True,
    )  # fmt: skip
    sys.stdout.write(done.stdout)
    overall = next(
        (line for line in done.stdout.splitlines() if line.startswith("overall:")),
        done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "",
    )
    return done.returncode, overall, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdk-repo", type=Path, required=True, help="a runpod-python clone")
    parser.add_argument("--only", nargs="*", help="branches to gate (default: every one)")
    parser.add_argument("--budget", default="15m", help="each gate's --budget")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="planted-"))
    try:
        sdk = work / "sdk"
        clone_sdk(args.sdk_repo, sdk, "planted defects")
        git(sdk, "checkout", "-q", "-B", "base", "v1.12.0")
        chosen = [d for d in DEFECTS if not args.only or d.branch in args.only]
        for defect in chosen:
            plant(sdk, defect)
        results = []
        for defect in chosen:
            print(f"== gate base {defect.branch} ({defect.what}) on {defect.suite}", flush=True)
            code, overall, wall = gate(work, defect, args.budget)
            results.append((defect, code, overall, wall))
        print("\n| defect | suite | exit (want) | wall | the gate said |")
        print("|---|---|---|---|---|")
        for defect, code, overall, wall in results:
            print(f"| {defect.what} | {defect.suite} | {code} ({defect.want}) | {wall:.0f} s "
                  f"| {overall} |")  # fmt: skip
        return 0 if all(code == d.want for d, code, _, _ in results) else 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
