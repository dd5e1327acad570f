"""Planted defects in the real runpod SDK: does `jobbench gate` fail each one (exit 1), by the
check that should find it, and pass a comment-only commit (exit 0)? (docs/ci.md
"Planted defects in the real SDK")

It clones a runpod-python repository into a throwaway folder, makes a branch `base` at v1.12.0
and one commit on top of it per defect a real pull request could bring to the job loop, then
gates each branch against `base` with the real SDK worker on the fake queue: on the default
`gate` suite, or on the one row where that kind of defect shows (a burst, a trickle of long
jobs, a queue that answers some takes 429 or some job-dones 500):

    git clone https://github.com/runpod/runpod-python /tmp/runpod-python
    python benchmarks/planted_defects.py --sdk-repo /tmp/runpod-python
    python benchmarks/planted_defects.py --sdk-repo /tmp/runpod-python --plant-only  # no gate

Each defect names the check of the gate that should find it (CHECKS), or one the gate lacks: a
kind of defect the gate cannot see yet, whose want is then 0 (the gate passes it), so the run
says what is missing instead of failing on it. Nothing of the SDK is kept in jobbench: the
branches live in the temporary folder, removed at the end (--keep keeps it). Each gate runs
with `--reps auto` and prints its own table; this prints one line a defect, with the checks the
gate's overall line named, and exits 1 unless every exit code was the one wanted.
"""

from __future__ import annotations

import argparse
import py_compile
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from jobbench.core.scenario.project import DEFAULT_SUITE
from jobbench.verdict.row_checks import FIGURE_RULES

SCALE = "runpod/serverless/modules/rp_scale.py"
JOB = "runpod/serverless/modules/rp_job.py"
HTTP = "runpod/serverless/modules/rp_http.py"
STATE = "runpod/serverless/modules/worker_state.py"
PING = "runpod/serverless/modules/rp_ping.py"

# The gate's checks, by the words its overall line names each by when it finds a regression
# (verdict/gate.py `_overall`: "broke in ROW (REASON)" or "slower in ROW"; the reasons'
# prefixes are verdict/correctness.py's, behaviour.py's and row_checks.py's FIGURE_RULES).
FIGURE_WORDS = {rule.metric: rule.what for rule in FIGURE_RULES}
CHECKS = {
    "correctness": "correctness:",
    "behaviour": "behaviour:",
    "CPU per job": FIGURE_WORDS["worker_cpu_ms_per_job"],
    "split": FIGURE_WORDS["split_imbalance"],
    "requests per job": FIGURE_WORDS["requests_per_job"],
    "time": "slower in",
}
NONE = "none"  # the comment-only commit: nothing to find


@dataclass(frozen=True)
class Defect:
    branch: str
    what: str
    file: str
    old: str  # the text of v1.12.0 the defect replaces (must be there exactly once)
    new: str
    suite: str  # the suite it is gated on: the default gate suite, or the row where it shows
    # The check that should find it: a key of CHECKS, NONE, or the one the gate lacks (its want
    # is then 0: the gate as it is passes the defect, and the line says what would see it).
    check: str
    want: int  # the gate's exit code: 1 caught, 0 passed

    @property
    def seen(self) -> bool:
        """The gate has the check that should find it."""
        return self.check in CHECKS


DEFECTS = (
    Defect(
        "comment-only",
        "a comment-only commit",
        SCALE,
        "        tasks: Set[asyncio.Task] = set()\n",
        "        # The running tasks, by nothing but identity.\n"
        "        tasks: Set[asyncio.Task] = set()\n",
        "burst",
        NONE,
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
        "correctness",
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
        "CPU per job",
        1,
    ),
    Defect(
        "start-on-finish",
        "a taken job starts only when a running one finishes",
        SCALE,
        "                    tasks, return_when=asyncio.FIRST_COMPLETED, timeout=0.1\n",
        "                    tasks, return_when=asyncio.FIRST_COMPLETED\n",
        "trickle",
        "time",
        1,
    ),
    Defect(
        "stall-after-429",
        "stalls 12 s after a 429",
        SCALE,
        "                await asyncio.sleep(5)  # debounce for 5 seconds\n",
        "                await asyncio.sleep(12)  # debounce for 12 seconds\n",
        "rate-limited",
        "time",  # or behaviour, where a run of 429s hangs a worker past the give-up
        1,
    ),
    Defect(
        "hoard",
        "every job to one worker (takes 32 x its free slots)",
        SCALE,
        "                    self.jobs_fetcher(session, jobs_needed),\n",
        "                    self.jobs_fetcher(session, jobs_needed * 32),\n",
        "burst",
        "split",
        1,
    ),
    # The job loop's own kinds, on the default gate suite unless a row of their own shows them.
    # A 0.3 s pause after a take moves the next full-check from the take's answer + 1 s to
    # + 1.3 s: on the 0.5 s rows a 32-job cycle of 1.5 s becomes 1.8 s (a 1 s pause would end
    # after the jobs, and take when 1.12.0's re-check does anyway).
    Defect(
        "pause-after-take",
        "a 0.3 s pause after every take",
        SCALE,
        "                # Yield control back to the event loop\n"
        "                await asyncio.sleep(0)\n",
        "                # Let the jobs just taken start before the next take.\n"
        "                await asyncio.sleep(0.3)\n",
        DEFAULT_SUITE,
        "time",
        1,
    ),
    Defect(
        "recheck-2s",
        "re-checks every 2 s (from 1 s) while the worker is full",
        SCALE,
        "                await asyncio.sleep(1)  # don't go rapidly\n",
        "                await asyncio.sleep(2)  # don't go rapidly\n",
        DEFAULT_SUITE,
        "time",
        1,
    ),
    # Twice the requests a job (a take for each job, beside its job-done), but a take a job
    # at the platform's 0.5 s also runs the deep rows past their rep's timeout (2 jobs a
    # second a worker): the candidate's first such rep ends the run with jobs not finished.
    Defect(
        "one-per-take",
        "one job per take where a batch was taken (the legacy job-take)",
        SCALE,
        "                    self.jobs_fetcher(session, jobs_needed),\n",
        "                    self.jobs_fetcher(session, 1),\n",
        DEFAULT_SUITE,
        "correctness",
        1,
    ),
    # The cap counts only the jobs waiting to start, not those running: a full worker takes a
    # batch more and holds it beyond its slots. That is take-ahead by its slots, faster on the
    # one-worker 2 s row and the same elsewhere; what it costs, jobs held while another worker
    # has a free slot, no check of the gate judges (held_compare.py shows it, never gated).
    Defect(
        "cap-counted-late",
        "the concurrency cap counts queued jobs only: a batch held beyond the slots",
        SCALE,
        "            jobs_needed = self.current_concurrency - self.current_occupancy()\n",
        "            jobs_needed = self.current_concurrency - self.jobs_queue.qsize()\n",
        DEFAULT_SUITE,
        "held beyond the slots (no such check)",
        0,
    ),
    # Two writes and two fsyncs a job on the worker's loop (each job's add and remove): a page
    # rewritten twice a job, far over the workers' disk writes threshold (measure/disk_writes.py),
    # so every rep shows the `disk_writes` behaviour, whatever the disk's speed.
    Defect(
        "state-on-disk",
        "the in-progress jobs written to disk (and fsynced) on every change",
        STATE,
        "    def _notify_mirror(self) -> None:\n"
        '        """Push the current job-id snapshot to the attached mirror, if any."""\n',
        "    def _notify_mirror(self) -> None:\n"
        '        """Push the current job-id snapshot to the attached mirror, if any."""\n'
        "        # Keep the in-progress jobs on disk too, so a restarted worker finds them.\n"
        '        with open("runpod_jobs_in_progress.txt", "w") as saved:\n'
        '            saved.write(self.get_job_list() or "")\n'
        "            saved.flush()\n"
        "            os.fsync(saved.fileno())\n",
        DEFAULT_SUITE,
        "behaviour",
        1,
    ),
    # A second take loop: the queue answers its long-poll with jobs as it does the first's, so
    # the requests per job stay (a poll costs a request per 20 s hold only when it comes back
    # empty) and the worker takes ahead. On the shallow row one worker's two takes, waiting
    # first, claim all 64 jobs: half of them wait behind its slots while two workers idle.
    Defect(
        "extra-long-poll",
        "a second take loop: an extra long-poll per worker",
        SCALE,
        "            jobtake_task = asyncio.create_task(self.get_jobs(session))\n",
        "            jobtake_task = asyncio.create_task(self.get_jobs(session))\n"
        "            # A second taker, so a take is always waiting at the queue.\n"
        "            jobtake_spare = asyncio.create_task(self.get_jobs(session))\n",
        DEFAULT_SUITE,
        "split",
        1,
    ),
    # 1.12.0 retries a job-done the server answered 5xx after 2 s (aiohttp_retry's
    # FibonacciRetry(attempts=3)); this waits 8 s, then 12. Only a row whose job-dones fail now
    # and then can show it: the default suite injects no fault.
    Defect(
        "retry-backoff",
        "a job-done retried after 8 s (from 2 s) when the server answers 500",
        HTTP,
        "    retry_options = FibonacciRetry(attempts=3)\n",
        "    retry_options = FibonacciRetry(attempts=3, multiplier=4, max_timeout=30)\n",
        "job-done-500",
        "time",
        1,
    ),
    # A job-done POST of IN_PROGRESS as each job starts: a request more a job on the worker's
    # own session, which neither its time nor its CPU shows (the POST is a millisecond).
    Defect(
        "progress-on-start",
        "an IN_PROGRESS update posted as every job starts",
        JOB,
        '        is_stream = False\n        job_result = await run_job(config["handler"], job)\n',
        "        is_stream = False\n"
        "        # Tell the platform the job started, so its status shows it running.\n"
        '        await send_result(session, {"status": "IN_PROGRESS"}, job)\n'
        '        job_result = await run_job(config["handler"], job)\n',
        DEFAULT_SUITE,
        "requests per job",
        1,
    ),
    Defect(
        "idle-busy-loop",
        "the job runner spins while it has nothing to run (sleep(0) for 0.1 s)",
        SCALE,
        "                # don't busy wait\n                await asyncio.sleep(0.1)\n",
        "                # nothing to run: look again at once\n"
        "                await asyncio.sleep(0)\n",
        DEFAULT_SUITE,
        "CPU per job",
        1,
    ),
    # The heartbeat in a thread of the worker's process: a handler that holds the GIL (a long
    # C call) stops it, and the platform sees a worker that stopped pinging. The bench handler
    # sleeps, so no row holds the GIL, and the queue logs no ping for a check to read.
    Defect(
        "heartbeat-thread",
        "the heartbeat in a thread, stopped while a handler holds the GIL",
        PING,
        "            process = Process(target=Heartbeat.process_loop, args=(mirror, test))\n"
        "            process.daemon = True\n"
        "            process.start()\n",
        "            # A thread is lighter than a process and shares the worker's memory.\n"
        "            from threading import Thread\n\n"
        "            process = Thread(\n"
        "                target=Heartbeat.process_loop, args=(mirror, test), daemon=True\n"
        "            )\n"
        "            process.start()\n",
        DEFAULT_SUITE,
        "heartbeat gaps (no such check, no row that holds the GIL)",
        0,
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

[suites.job-done-500]
reps = 5
latency = { take = 0.5, wake = 0.05 }
# One job-done in 20 answered 500 on both sides: 1.12.0 posts it again after 2 s, its slot held
# meanwhile, so about 13 of 256 jobs end a retry later; a longer back-off ends the last of them
# after the burst's other jobs, which moves the time to 99 %.
faults = ["job-done:500:0.05"]
scenarios = [{ name = "2w-256j-done-500", workers = 2, slots = 16, burst = 256, job_seconds = 0.5 }]
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


def planted(defect: Defect, text: str) -> str:
    """The file's text with the defect in it; SystemExit where v1.12.0's text it replaces is
    not there exactly once (the SDK moved)."""
    times = text.count(defect.old)
    if times != 1:
        raise SystemExit(
            f"{defect.branch}: {defect.file} holds the text it changes {times} times, not once"
        )
    return text.replace(defect.old, defect.new)


def plant(sdk: Path, defect: Defect) -> None:
    """The defect's branch: `base` and one commit, whose file must still compile (a syntax
    error would show only as a worker that dies at its start, on the candidate's side)."""
    git(sdk, "checkout", "-q", "-B", defect.branch, "base")
    path = sdk / defect.file
    path.write_text(planted(defect, path.read_text()))
    try:
        py_compile.compile(str(path), doraise=True, cfile=str(sdk.parent / "planted.pyc"))
    except py_compile.PyCompileError as exc:
        raise SystemExit(f"{defect.branch}: {defect.file} does not compile: {exc.msg}") from None
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


def named(overall: str) -> list[str]:
    """The checks the gate's overall line names a regression by, in CHECKS's order."""
    return [check for check, words in CHECKS.items() if words in overall]


def summary_line(defect: Defect, code: int, overall: str, wall: float) -> str:
    """A defect's row: its check and exit code, each with what the gate did."""
    said = ", ".join(named(overall)) or "-"
    check = defect.check if defect.seen or defect.check == NONE else f"{defect.check}: unseen"
    return (
        f"| {defect.what} | {defect.suite} | {check} | {code} ({defect.want}) | {said} "
        f"| {wall:.0f} s | {overall} |"
    )


def by_another_check(results: list[tuple[Defect, int, str, float]]) -> list[str]:
    """The defects caught as wanted but not named by the check that should find them."""
    return [
        f"{d.branch}: {', '.join(named(overall)) or 'no check'} (wanted {d.check})"
        for d, code, overall, _ in results
        if d.seen and code == d.want == 1 and d.check not in named(overall)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdk-repo", type=Path, required=True, help="a runpod-python clone")
    parser.add_argument("--only", nargs="*", help="branches to gate (default: every one)")
    parser.add_argument("--budget", default="15m", help="each gate's --budget")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--plant-only", action="store_true", help="make and check the branches, gate none"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="planted-"))
    try:
        sdk = work / "sdk"
        clone_sdk(args.sdk_repo, sdk, "planted defects")
        git(sdk, "checkout", "-q", "-B", "base", "v1.12.0")
        chosen = [d for d in DEFECTS if not args.only or d.branch in args.only]
        for defect in chosen:
            plant(sdk, defect)
        if args.plant_only:
            print(f"planted {len(chosen)} branches on v1.12.0, each compiles: "
                  f"{', '.join(d.branch for d in chosen)}")  # fmt: skip
            return 0
        results = []
        for defect in chosen:
            print(f"== gate base {defect.branch} ({defect.what}) on {defect.suite}", flush=True)
            code, overall, wall = gate(work, defect, args.budget)
            results.append((defect, code, overall, wall))
            # Each gate's line as it ends, so a run stopped early keeps the ones it finished.
            print(f"== done: {summary_line(defect, code, overall, wall)}", flush=True)
        print("\n| defect | suite | check | exit (want) | named | wall | the gate said |")
        print("|---|---|---|---|---|---|---|")
        for result in results:
            print(summary_line(*result))
        for line in by_another_check(results):
            print(f"caught by another check: {line}")
        return 0 if all(code == d.want for d, code, _, _ in results) else 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
