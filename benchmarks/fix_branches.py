"""The two SDK fixes as real runpod-python branches, each measured side by side with
its model worker and the simulator: is each model within 2 % of its branch on every seed row?
(docs/fixes.md, "Real branches")

It clones a runpod-python repository into a throwaway folder and makes, on top of v1.12.0, one
branch per fix from the edit tables below (each edit's old text must be in 1.12.0 exactly once):

- `take-ahead`: the take-ahead pull request's rules, exactly those the `sdk-take-ahead` model
  implements (jobbench/workers/policy_sdk_take_ahead.py): after a take came back full and every
  slot is busy, take K more and hold them; one buffer at a time; a stop drops a held job; held
  jobs run on shutdown; off with refresh_worker;
- `job-cache`: runpod-python #429's cache ported to 1.12.0, the rules the `job-cache` model
  implements (jobbench/workers/policy_job_cache.py): a cache of up to 100 jobs served first, a
  take asking min(3 x need, 50), a 0.1 s tick when full, a doubling back-off after empty takes.

Then, per branch, `jobbench compare <branch> <model>` runs the real SDK from the branch and the
model worker interleaved on the chosen seed rows, and one `compare --target sim` runs both models
in the simulator on the same rows. It prints per row the three medians of the row's metric and
the model's and the simulator's difference from the branch, checks from the queue's events that
each branch did what its rules say, and exits 1 if a difference is past 2 % or a check failed.
A bound can only be shown where the branch reproduces itself: an A/A run (`compare <branch>
<branch>`, two sets of its workers interleaved) says per row whether it does, and a row where the
branch differs from itself by more than the bound is called so, not blamed on the model:

    python benchmarks/fix_branches.py                      # the mirror, every seed row, 5 reps
    python benchmarks/fix_branches.py --rows 4w-64j-0.5s-shallow --reps 1   # a smoke
    python benchmarks/fix_branches.py --reuse /tmp/fix-branches-XXXX   # the simulator again
    python benchmarks/fix_branches.py --more /tmp/fix-branches-XXXX --branches job-cache \
        --rows 1w-512j-0.5s --reps 40     # 40 more reps a side, judged with the kept ones

Nothing of the SDK is kept in jobbench: the branches live in the temporary folder, removed at
the end (--keep keeps it, with the compare reports and events under <folder>/<branch>/reports).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planted_defects import SCALE, clone_sdk, git

from jobbench.core.scenario.project import SEED_ROWS
from jobbench.results.decision import Rule, weigh
from jobbench.workers.policy_job_cache import fetch_count

BASE_TAG = "v1.12.0"
TOLERANCE = 0.02  # a model within 2 % of its branch on every row
SLOTS = 32  # the seed rows' slots (their concurrency_modifier); the job-cache check needs it
TAKE_AHEAD = 32  # K, as the built-in `pr` variant
AGAIN = "again"  # the folder of the A/A run's reports, beside `reports`
# The simulator's reps a row: milliseconds each, and the SDK-based models' reps draw their loop's
# timing, so 30 left take-ahead's 4 x 1,024 row to the draws (docs/fixes.md, "Figures").
SIM_REPS = 100
# The gate's statistics (Hodges-Lehmann change, 95 % interval), with no rep an outlier: the job
# cache's slow path (docs/fixes.md) is the branch's own behaviour, which a median of the other
# reps would hide. Reps the runner flagged (a saturated machine) still do not count.
EVERY_REP = Rule(outlier_z=math.inf)


@dataclass(frozen=True)
class Edit:
    file: str
    old: str  # text of v1.12.0, there exactly once
    new: str


@dataclass(frozen=True)
class Branch:
    name: str  # the git branch, and the real side's variant (`<name>-sdk`)
    what: str
    edits: tuple[Edit, ...]
    policy: str  # the model worker's policy
    take_ahead: bool  # both sides run with --take-ahead K


# 1.12.0's get_jobs loop up to its take, which both branches change (rp_scale.py).
GET_JOBS_HEAD = (
    "        while self.is_alive():\n"
    "            await self.set_scale()\n\n"
    "            jobs_needed = self.current_concurrency - self.current_occupancy()\n"
    "            if jobs_needed <= 0:\n"
    '                log.debug("JobScaler.get_jobs | Queue is full. Retrying soon.")\n'
    "                await asyncio.sleep(1)  # don't go rapidly\n"
    "                continue\n\n"
    "            try:\n"
    '                log.debug("JobScaler.get_jobs | Starting job acquisition.")\n\n'
)


# ---- the take-ahead branch -----------------------------------------------------------------
TAKE_AHEAD_EDITS = (
    Edit(
        SCALE,
        "import signal\nimport sys\nimport traceback\n",
        "import os\nimport signal\nimport sys\nimport traceback\nfrom collections import deque\n",
    ),
    Edit(
        SCALE,
        "        self.jobs_queue = asyncio.Queue(maxsize=self.current_concurrency)\n\n",
        "        self.jobs_queue = asyncio.Queue(maxsize=self.current_concurrency)\n\n"
        "        # Take-ahead: once a take came back full and every slot is busy, take up to\n"
        "        # `take_ahead` more jobs and hold them until slots free, one buffer at a time.\n"
        "        # A worker that stops after its first job (refresh_worker) would leave held\n"
        "        # jobs waiting out its refresh, so it takes none.\n"
        "        self.take_ahead = 0\n"
        '        if not config.get("refresh_worker", False):\n'
        "            self.take_ahead = int(\n"
        '                config.get("take_ahead") or os.environ.get("RUNPOD_TAKE_AHEAD") or 0\n'
        "            )\n"
        "        self.held_jobs: deque = deque()\n"
        "        self._held_empty = asyncio.Event()\n"
        "        self._held_empty.set()\n\n",
    ),
    Edit(
        SCALE,
        GET_JOBS_HEAD,
        "        last_full = False  # the last take brought all it asked for\n"
        "        while self.is_alive():\n"
        "            await self.set_scale()\n\n"
        "            jobs_needed = self.current_concurrency - self.current_occupancy()\n"
        "            taking_ahead = False\n"
        "            if jobs_needed <= 0:\n"
        "                if not (self.take_ahead and last_full):\n"
        '                    log.debug("JobScaler.get_jobs | Queue is full. Retrying soon.")\n'
        "                    await asyncio.sleep(1)  # don't go rapidly\n"
        "                    continue\n"
        "                if self.held_jobs:\n"
        "                    # One buffer at a time: the next take-ahead waits for this one.\n"
        "                    await self._held_empty.wait()\n"
        "                    continue\n"
        "                taking_ahead = True\n"
        "                jobs_needed = self.take_ahead\n\n"
        "            try:\n"
        '                log.debug("JobScaler.get_jobs | Starting job acquisition.")\n'
        "                last_full = False  # an error or a timeout is not a full take\n\n",
    ),
    Edit(
        SCALE,
        "                for job in acquired_jobs:\n"
        "                    await self.jobs_queue.put(job)\n"
        "                    self.job_progress.add(job)\n"
        '                    log.debug("Job Queued", job["id"])\n',
        "                last_full = len(acquired_jobs) >= jobs_needed\n"
        "                for job in acquired_jobs:\n"
        "                    if taking_ahead:\n"
        "                        self.hold_job(job)\n"
        "                        continue\n"
        "                    await self.jobs_queue.put(job)\n"
        "                    self.job_progress.add(job)\n"
        '                    log.debug("Job Queued", job["id"])\n',
    ),
    Edit(
        SCALE,
        "    async def run_jobs(self, session: ClientSession):\n",
        "    def hold_job(self, job: dict) -> None:\n"
        '        """Hold a job taken ahead until a slot frees. It is the worker\'s job from now\n'
        "        on (the heartbeat reports it), and counts once against the slots, as progress.\n"
        '        """\n'
        "        self.held_jobs.append(job)\n"
        "        self.job_progress.add(job)\n"
        "        self._held_empty.clear()\n"
        '        log.debug("Job Held", job["id"])\n\n'
        "    def next_held(self) -> dict:\n"
        '        """The oldest held job, for a slot that freed."""\n'
        "        job = self.held_jobs.popleft()\n"
        "        if not self.held_jobs:\n"
        "            self._held_empty.set()\n"
        "        return job\n\n"
        "    async def run_jobs(self, session: ClientSession):\n",
    ),
    Edit(
        SCALE,
        "        while self.is_alive() or not self.jobs_queue.empty():\n"
        "            # Fetch as many jobs as the concurrency allows\n"
        "            while len(tasks) < self.current_concurrency and not self.jobs_queue.empty():\n"
        "                job = await self.jobs_queue.get()\n"
        "                # Create a new task for each job and track it by job id\n"
        "                task = asyncio.create_task(self.handle_job(session, job))\n",
        "        # Held jobs are the worker's: on shutdown they still run and post their results.\n"
        "        while self.is_alive() or not self.jobs_queue.empty() or self.held_jobs:\n"
        "            # Fetch as many jobs as the concurrency allows: queued ones, then held ones\n"
        "            while len(tasks) < self.current_concurrency and (\n"
        "                not self.jobs_queue.empty() or self.held_jobs\n"
        "            ):\n"
        "                # Create a new task for each job and track it by job id\n"
        "                if not self.jobs_queue.empty():\n"
        "                    job = await self.jobs_queue.get()\n"
        "                    task = asyncio.create_task(self.handle_job(session, job))\n"
        "                else:\n"
        "                    job = self.next_held()\n"
        "                    task = asyncio.create_task(\n"
        "                        self.handle_job(session, job, queued=False)\n"
        "                    )\n",
    ),
    Edit(
        SCALE,
        "        task = self.jobs_tasks.get(job_id)\n"
        "        if task is None:\n"
        '            log.debug(f"JobScaler.stop_job | No in-progress job for {job_id}.")\n',
        "        for job in self.held_jobs:\n"
        '            if job["id"] == job_id:\n'
        "                # Not started: dropped, with no result to post.\n"
        "                self.held_jobs.remove(job)\n"
        "                self.job_progress.remove(job)\n"
        "                if not self.held_jobs:\n"
        "                    self._held_empty.set()\n"
        '                log.info("Dropped held job.", job_id)\n'
        "                return True\n\n"
        "        task = self.jobs_tasks.get(job_id)\n"
        "        if task is None:\n"
        '            log.debug(f"JobScaler.stop_job | No in-progress job for {job_id}.")\n',
    ),
    Edit(
        SCALE,
        "    async def handle_job(self, session: ClientSession, job: dict):\n",
        "    async def handle_job(self, session: ClientSession, job: dict, queued: bool = True):\n",
    ),
    Edit(
        SCALE,
        "            # Inform Queue of a task completion\n"
        "            self.jobs_queue.task_done()\n",
        "            # Inform Queue of a task completion (a held job never was in it)\n"
        "            if queued:\n"
        "                self.jobs_queue.task_done()\n",
    ),
)

# ---- the job-cache branch: #429 (head 79126e6) on 1.12.0 -------------------------------------
# #429 rewrote rp_scale.py whole; what is ported is its scheduling (JobCache, get_jobs, the
# runner's waits), not its stats counters, its semaphore (the task count already bounds the
# runner) or its worker_state.py rewrite (no rule of the cache). 1.12.0's job-stop poll stays.
JOB_CACHE_EDITS = (
    Edit(
        SCALE,
        "import asyncio\nimport signal\nimport sys\nimport traceback\n"
        "from typing import Any, Dict, Set\n",
        "import asyncio\nimport signal\nimport sys\nimport traceback\n"
        "from collections import deque\n"
        "from typing import Any, Dict, List, Set\n",
    ),
    Edit(
        SCALE,
        "log = RunPodLogger()\n\n\n",
        "log = RunPodLogger()\n\n\n"
        "class JobCache:\n"
        '    """Cache excess jobs to reduce API calls (#429)"""\n\n'
        "    def __init__(self, max_cache_size: int = 100):\n"
        "        self._cache = deque(maxlen=max_cache_size)\n"
        "        self._lock = asyncio.Lock()\n\n"
        "    async def get_jobs(self, count: int) -> List[Dict[str, Any]]:\n"
        '        """Get jobs from cache"""\n'
        "        async with self._lock:\n"
        "            jobs = []\n"
        "            for _ in range(min(count, len(self._cache))):\n"
        "                if self._cache:\n"
        "                    jobs.append(self._cache.popleft())\n"
        "            return jobs\n\n"
        "    async def add_jobs(self, jobs: List[Dict[str, Any]]) -> None:\n"
        '        """Add excess jobs to cache"""\n'
        "        async with self._lock:\n"
        "            self._cache.extend(jobs)\n\n"
        "    def size(self) -> int:\n"
        '        """Get cache size"""\n'
        "        return len(self._cache)\n\n\n",
    ),
    Edit(
        SCALE,
        "        self.jobs_queue = asyncio.Queue(maxsize=self.current_concurrency)\n\n",
        "        self.jobs_queue = asyncio.Queue(maxsize=self.current_concurrency)\n\n"
        "        # Job cache for batch fetching (#429)\n"
        "        self._job_cache = JobCache(max_cache_size=100)\n\n",
    ),
    Edit(
        SCALE,
        GET_JOBS_HEAD + "                # Keep the connection to the blocking call with timeout\n"
        "                acquired_jobs = await asyncio.wait_for(\n"
        "                    self.jobs_fetcher(session, jobs_needed),\n"
        "                    timeout=self.jobs_fetcher_timeout,\n"
        "                )\n\n"
        "                if not acquired_jobs:\n"
        '                    log.debug("JobScaler.get_jobs | No jobs acquired.")\n'
        "                    continue\n\n"
        "                for job in acquired_jobs:\n"
        "                    await self.jobs_queue.put(job)\n"
        "                    self.job_progress.add(job)\n"
        '                    log.debug("Job Queued", job["id"])\n',
        "        consecutive_empty = 0\n"
        "        while self.is_alive():\n"
        "            await self.set_scale()\n\n"
        "            jobs_needed = self.current_concurrency - self.current_occupancy()\n"
        "            if jobs_needed <= 0:\n"
        '                log.debug("JobScaler.get_jobs | Queue is full. Retrying soon.")\n'
        "                await asyncio.sleep(0.1)  # Shorter sleep\n"
        "                continue\n\n"
        "            try:\n"
        "                # Check cache first\n"
        "                cached_jobs = await self._job_cache.get_jobs(jobs_needed)\n"
        "                if cached_jobs:\n"
        "                    for job in cached_jobs:\n"
        "                        await self._put_job(job)\n"
        "                    jobs_needed -= len(cached_jobs)\n"
        "                    if jobs_needed <= 0:\n"
        "                        continue\n\n"
        "                # Fetch more jobs than needed (batching)\n"
        "                fetch_count = min(jobs_needed * 3, 50)  # Fetch up to 3x needed, max 50\n"
        "                log.debug(\n"
        '                    f"JobScaler.get_jobs | Fetching {fetch_count} jobs '
        '(need {jobs_needed})"\n'
        "                )\n\n"
        "                # Keep the connection to the blocking call with timeout\n"
        "                acquired_jobs = await asyncio.wait_for(\n"
        "                    self.jobs_fetcher(session, fetch_count),\n"
        "                    timeout=self.jobs_fetcher_timeout,\n"
        "                )\n\n"
        "                if not acquired_jobs:\n"
        '                    log.debug("JobScaler.get_jobs | No jobs acquired.")\n'
        "                    consecutive_empty += 1\n"
        "                    # Exponential backoff\n"
        "                    await asyncio.sleep(min(0.1 * (2**consecutive_empty), 5.0))\n"
        "                    continue\n\n"
        "                consecutive_empty = 0\n"
        "                # Queue what we need now, cache the rest\n"
        "                for i, job in enumerate(acquired_jobs):\n"
        "                    if i < jobs_needed:\n"
        "                        await self._put_job(job)\n"
        "                    else:\n"
        "                        await self._job_cache.add_jobs(acquired_jobs[i:])\n"
        "                        break\n",
    ),
    Edit(
        SCALE,
        "    async def run_jobs(self, session: ClientSession):\n",
        "    async def _put_job(self, job: Dict[str, Any]):\n"
        '        """Put a job in the queue and count it in progress (#429)"""\n'
        "        await self.jobs_queue.put(job)\n"
        "        self.job_progress.add(job)\n"
        '        log.debug("Job Queued", job["id"])\n\n'
        "    async def run_jobs(self, session: ClientSession):\n",
    ),
    Edit(
        SCALE,
        "            # Fetch as many jobs as the concurrency allows\n"
        "            while len(tasks) < self.current_concurrency and not self.jobs_queue.empty():\n"
        "                job = await self.jobs_queue.get()\n",
        "            # Fill the free slots, waiting up to 0.1 s on the queue for each job (#429)\n"
        "            while len(tasks) < self.current_concurrency:\n"
        "                try:\n"
        "                    job = await asyncio.wait_for(self.jobs_queue.get(), timeout=0.1)\n"
        "                except asyncio.TimeoutError:\n"
        "                    break\n",
    ),
    Edit(
        SCALE,
        "                # don't busy wait\n                await asyncio.sleep(0.1)\n",
        "                # No active tasks, short sleep (#429)\n"
        "                await asyncio.sleep(0.01)\n",
    ),
    Edit(
        SCALE,
        "        results = await asyncio.gather(*tasks, return_exceptions=True)\n",
        "        results = await asyncio.gather(*tasks, return_exceptions=True)\n"
        "        if self._job_cache.size():\n"
        '            log.warn(f"JobScaler.run_jobs | {self._job_cache.size()} '
        'cached jobs not run.")\n',
    ),
)

BRANCHES = (
    Branch(
        "take-ahead",
        "the take-ahead pull request's rules",
        TAKE_AHEAD_EDITS,
        "sdk-take-ahead",
        True,
    ),
    Branch("job-cache", "runpod-python #429's job cache", JOB_CACHE_EDITS, "job-cache", False),
)


class EditMissing(Exception):
    """An edit's old text is not in the file exactly once: the SDK is not the 1.12.0 it was
    written for."""


def apply_edits(branch: str, file: str, text: str, edits: tuple[Edit, ...]) -> str:
    """`text` with each of `edits` to `file` made in turn, each old text there exactly once."""
    for index, edit in enumerate(e for e in edits if e.file == file):
        found = text.count(edit.old)
        if found != 1:
            first = edit.old.strip().splitlines()[0]
            raise EditMissing(
                f"{branch} edit {index + 1} to {file}: its old text ({first!r}...) is there "
                f"{found} times, not once"
            )
        text = text.replace(edit.old, edit.new)
    return text


def build_branch(sdk: Path, branch: Branch) -> None:
    """The branch at v1.12.0 plus its edits, one commit."""
    git(sdk, "checkout", "-q", "-B", branch.name, BASE_TAG)
    for file in sorted({edit.file for edit in branch.edits}):
        path = sdk / file
        try:
            path.write_text(apply_edits(branch.name, file, path.read_text(), branch.edits))
        except EditMissing as exc:
            raise SystemExit(str(exc)) from None
    git(sdk, "commit", "-q", "-am", f"{branch.name}: {branch.what} (a jobbench fixes branch)")


# ---- the runs -------------------------------------------------------------------------------
def model_variant(branch: Branch) -> str:
    return f"{branch.name}-model"


def sdk_variant(branch: Branch) -> str:
    return f"{branch.name}-sdk"


def project_toml(branches: list[Branch], rows: list[str], take_ahead: int) -> str:
    """The variants (each branch's SDK from its worktree, each model) and the chosen seed rows as
    the suite `rows`, for a jobbench.toml one folder below the temporary folder."""
    lines = []
    for branch in branches:
        k = f"take_ahead = {take_ahead}\n" if branch.take_ahead else ""
        lines.append(
            f'[variants.{sdk_variant(branch)}]\nworker = "runpod"\n'
            f'sdk = "../sdk-{branch.name}"\n{k}'
        )
        lines.append(
            f'[variants.{model_variant(branch)}]\nworker = "model"\npolicy = "{branch.policy}"\n{k}'
        )
    scenarios = ",\n".join(
        f'  {{ name = "{name}", workers = {w}, burst = {b}, job_seconds = {s}, metric = "{m}" }}'
        for name, w, b, s, m in SEED_ROWS
        if name in rows
    )
    lines.append(f"[suites.rows]\nscenarios = [\n{scenarios},\n]\n")
    return "\n".join(lines)


def compare(
    folder: Path, a: str, b: str, reps: int, target: str, out: str = "reports"
) -> dict[str, Any]:
    """`jobbench compare a b` on the suite `rows`, interleaved, run anew, saved under `out`; its
    JSON document."""
    done = subprocess.run(
        [sys.executable, "-m", "jobbench", "compare", a, b, "--suite", "rows", "--reps",
         str(reps), "--rerun", "--target", target, "--format", "json", "--out", out],
        cwd=folder, text=True, capture_output=True,
    )  # fmt: skip
    try:
        return dict(json.loads(done.stdout))
    except json.JSONDecodeError:
        raise SystemExit(
            f"compare {a} {b} --target {target} exited {done.returncode}: {done.stderr[-2000:]}"
        ) from None


@dataclass(frozen=True)
class Row:
    metric: str
    a: list[float]  # the baseline's reps that count (not flagged by the runner)
    b: list[float]
    flagged: int  # reps set aside as disturbed measurements, both sides


def counted(value: dict[str, Any], side: str, letter: str) -> list[float]:
    """A side's reps, but those the runner flagged (compare lists them as excluded, `flagged:
    ...`); outliers count (EVERY_REP)."""
    flagged = {
        e["rep"]
        for e in value["excluded"]
        if e["side"] == letter and e["reason"].startswith("flagged")
    }
    return [v for i, v in enumerate(value["values"][side], start=1) if i not in flagged and v]


def pooled(docs: list[dict[str, Any]]) -> dict[str, Row]:
    """Per row, the reps of every compare document that ran it, run after run (`--more`): each
    run interleaves its two sides, so each block of reps is side by side."""
    found: dict[str, Row] = {}
    for doc in docs:
        for name, row in figures(doc).items():
            before = found.get(name)
            if before is not None:
                row = Row(
                    row.metric, before.a + row.a, before.b + row.b, before.flagged + row.flagged
                )
            found[name] = row
    return found


def runs_of(folder: Path, base: str) -> list[Path]:
    """The folder of a branch's first run (`reports` or `again`) and those of the runs `--more`
    added (`reports-2`, `reports-3`, ...), in the order they ran; those that exist."""
    more = sorted(folder.glob(f"{base}-[0-9]*"), key=lambda path: int(path.name.rsplit("-", 1)[1]))
    return [path for path in [folder / base, *more] if path.is_dir()]


def next_run(folder: Path) -> int:
    """The number of the next run `--more` adds to a branch's folder (its first run is 1)."""
    return len(runs_of(folder, "reports")) + 1


def figures(doc: dict[str, Any]) -> dict[str, Row]:
    """Per row: its gated metric and each side's reps that count."""
    found = {}
    for row in doc["rows"]:
        metric = row["metric"]
        value = row["metrics"][metric]
        a, b = counted(value, "baseline", "A"), counted(value, "candidate", "B")
        every = len(value["values"]["baseline"]) + len(value["values"]["candidate"])
        found[row["scenario"]] = Row(metric, a, b, every - len(a) - len(b))
    return found


# ---- did each branch do what its rules say? (the queue's events) ------------------------------
def read_events(path: Path) -> list[dict[str, Any]]:
    with path.open() as lines:
        return [json.loads(line) for line in lines if line.strip()]


def takes_while_full(events: list[dict[str, Any]], slots: int) -> int:
    """Takes that reached the queue while their worker held `slots` jobs or more, delivered and
    not done: take-ahead's second take while the first batch runs (1.12.0 makes none)."""
    held: defaultdict[tuple[Any, Any, Any, str], int] = defaultdict(int)
    timeline = []
    for e in events:
        key = (e.get("run"), e.get("scenario"), e.get("rep"), str(e.get("worker")))
        if e["ev"] == "deliver":
            timeline.append((e["t"], 1, key, 1))
        elif e["ev"] == "done" and e.get("worker"):
            timeline.append((e["t"], 0, key, -1))  # a job-done before a take at the same t
        elif e["ev"] == "take":
            timeline.append((e.get("arrived", e["t"]), 2, key, 0))
    count = 0
    for _, kind, key, step in sorted(timeline, key=lambda x: (x[0], x[1])):
        if kind == 2:
            count += held[key] >= slots
        else:
            held[key] += step
    return count


def asked_sizes(events: list[dict[str, Any]]) -> list[int]:
    return [int(e["asked"]) for e in events if e["ev"] == "take"]


def deep(rows: list[str]) -> bool:
    """A row with more jobs than its workers' slots: there a take-ahead finds jobs queued and is
    answered within the rep (on a shallow row it waits out the rep, and no event shows it)."""
    return any(burst > workers * SLOTS for name, workers, burst, *_ in SEED_ROWS if name in rows)


def check_behaviour(
    branch: Branch, events: list[dict[str, Any]], take_ahead: int, rows: list[str]
) -> str | None:
    """What the branch's events show against its rules; None when they hold."""
    asked = asked_sizes(events)
    if branch.take_ahead:
        if deep(rows) and takes_while_full(events, SLOTS) == 0:
            return "no take reached the queue while a worker's slots were all busy"
        if max(asked) > max(SLOTS, take_ahead):
            return f"a take asked {max(asked)}, more than the slots or K"
        return None
    allowed = {fetch_count(need) for need in range(1, SLOTS + 1)}
    if not set(asked) <= allowed:
        return f"takes asked {sorted(set(asked) - allowed)}, none of min(3 x need, 50)"
    if fetch_count(SLOTS) not in asked:
        return f"no take asked min(3 x {SLOTS}, 50) = {fetch_count(SLOTS)} with every slot free"
    return None


def describe_takes(branch: Branch, events: list[dict[str, Any]]) -> str:
    asked = asked_sizes(events)
    sizes = ", ".join(f"{n} x{asked.count(n)}" for n in sorted(set(asked), reverse=True))
    full = takes_while_full(events, SLOTS)
    return f"{len(asked)} takes (asked {sizes}); {full} while the worker's slots were all busy"


# ---- the table ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Judged:
    change: float | None  # B/A - 1 (Hodges-Lehmann), None: too few reps
    ci: tuple[float, float] | None  # 95 %
    verdict: str  # "within 2 %", "past 2 %" or "open"

    def cell(self) -> str:
        if self.change is None or self.ci is None:
            return "too few reps"
        low, high = self.ci
        return f"{self.change:+.1%} [{low:+.1%}, {high:+.1%}]"


def judge(real: list[float], other: list[float]) -> Judged:
    """`other` against `real`: within the bound when its 95 % interval lies inside +-2 %, past
    it when the interval lies wholly outside, open when the reps cannot tell (more reps)."""
    evidence = weigh(real, other, EVERY_REP)
    if evidence.change is None or evidence.ci is None:
        return Judged(None, None, "open")
    low, high = evidence.ci
    if low >= -TOLERANCE and high <= TOLERANCE:
        verdict = "within 2 %"
    elif low > TOLERANCE or high < -TOLERANCE:
        verdict = "past 2 %"
    else:
        verdict = "open"
    return Judged(evidence.change, evidence.ci, verdict)


def report(
    rows: list[str],
    real: dict[str, dict[str, Row]],
    itself: dict[str, dict[str, Row]],
    sim: dict[str, Row],
    branches: list[Branch],
) -> bool:
    """Print the table; True when every model and simulated figure is shown within TOLERANCE.
    `itself`: per branch that ran one, its A/A run's rows (a second set of its workers as B)."""
    print(
        "\n| branch | row | metric | real | model | sim | model vs real [95 %] | "
        "sim vs real [95 %] | real vs itself [95 %] | verdict |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    within, spread = True, []
    for index, branch in enumerate(branches):
        for row in rows:
            measured = real[branch.name][row]
            # The simulator's compare: the first branch's model is A, the second's B.
            simulated = sim[row].a if index == 0 else sim[row].b
            model, simmed = judge(measured.a, measured.b), judge(measured.a, simulated)
            again = itself.get(branch.name, {}).get(row)
            own = judge(again.a, again.b) if again else None
            verdicts = {model.verdict, simmed.verdict}
            within = within and verdicts == {"within 2 %"}
            verdict = "; ".join(
                f"{what} {j.verdict}" for what, j in (("model", model), ("sim", simmed))
            )
            if own is not None and own.verdict != "within 2 %":
                # A branch that differs from itself by more than the bound: no model can be
                # shown within it, and a miss there says as much of the branch as of the model.
                within = False
                verdict += f"; the branch against itself {own.verdict}: the bound cannot be shown"
            if measured.flagged:
                verdict += f"; {measured.flagged} reps flagged (a disturbed machine) not counted"
            medians = " | ".join(
                f"{statistics.median(v):.3f}" if v else "-"
                for v in (measured.a, measured.b, simulated)
            )
            aa = own.cell() if own else "not run"
            print(f"| {branch.name} | {row} | {measured.metric} | {medians} | {model.cell()} | "
                  f"{simmed.cell()} | {aa} | {verdict} |")  # fmt: skip
            spread += spread_lines(f"{branch.name} {row}", measured, simulated)
    if spread:
        print("\nRows whose reps spread past twice the bound, every rep (sorted):")
        print("\n".join(spread))
    return within


def spread_lines(title: str, measured: Row, simulated: list[float]) -> list[str]:
    """Every rep's figure of a row whose reps spread past twice the bound: the job cache takes
    one of several paths in a rep (docs/fixes.md), and the medians alone hide how often each
    side took which."""
    sides = (("real", measured.a), ("model", measured.b), ("sim", simulated))
    if all(not v or max(v) <= min(v) * (1 + 2 * TOLERANCE) for _, v in sides):
        return []
    return [
        f"- {title}, {name}: {', '.join(f'{v:.2f}' for v in sorted(values))}"
        for name, values in sides
    ]


def main() -> int:
    names = [row[0] for row in SEED_ROWS]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdk-repo", type=Path, required=True, help="a runpod-python clone")
    parser.add_argument("--rows", nargs="*", choices=names, help="seed rows (default: every one)")
    parser.add_argument("--branches", nargs="*", choices=[b.name for b in BRANCHES])
    parser.add_argument("--reps", type=int, default=5, help="reps a side and row")
    parser.add_argument("--sim-reps", type=int, default=SIM_REPS, help="the simulator's reps a row")
    parser.add_argument("--take-ahead", type=int, default=TAKE_AHEAD, help="K of both sides")
    parser.add_argument(
        "--a-a", action=argparse.BooleanOptionalAction, default=True,
        help="run each branch against itself too: does it reproduce itself within the bound?",
    )  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--reuse", type=Path, metavar="FOLDER",
        help="a folder kept by --keep: its real runs judged again, the simulator run anew",
    )  # fmt: skip
    parser.add_argument(
        "--more", type=Path, metavar="FOLDER",
        help="a folder kept by --keep: --reps more reps a side of --rows, judged with its others",
    )  # fmt: skip
    args = parser.parse_args()
    if args.reuse and args.more:
        parser.error("--reuse and --more: use one (--more judges the kept runs too)")
    rows = args.rows or names
    branches = [b for b in BRANCHES if not args.branches or b.name in args.branches]
    # The one simulator run has two sides: one branch's model runs as both.
    branches_sim = branches if len(branches) > 1 else [*branches, *branches]
    kept = args.reuse or args.more
    work = kept or Path(tempfile.mkdtemp(prefix="fix-branches-"))
    try:
        if kept is None:
            build_worktrees(args.sdk_repo, work, branches)
        toml = project_toml(branches, rows, args.take_ahead)
        real: dict[str, dict[str, Row]] = {}
        itself: dict[str, dict[str, Row]] = {}
        problems = []
        for branch in branches:
            folder = work / branch.name
            if args.reuse is None:
                number = 1 if args.more is None else next_run(folder)
                suffix = "" if number == 1 else f"-{number}"
                folder.mkdir(exist_ok=args.more is not None)
                (folder / "jobbench.toml").write_text(toml)  # --more: this run's rows
                print(f"== {branch.name}: the real branch against its model, {args.reps} reps")
                sdk, model = sdk_variant(branch), model_variant(branch)
                compare(folder, sdk, model, args.reps, "fake", out=f"reports{suffix}")
                if args.a_a:
                    print(f"== {branch.name}: the real branch against itself, {args.reps} reps")
                    compare(folder, sdk, sdk, args.reps, "fake", out=f"{AGAIN}{suffix}")
            name = f"{sdk_variant(branch)}-vs-{model_variant(branch)}.json"
            reports = runs_of(folder, "reports")
            real[branch.name] = pooled([json.loads((r / name).read_text()) for r in reports])
            aa = f"{sdk_variant(branch)}-vs-{sdk_variant(branch)}-b.json"
            again = [run / aa for run in runs_of(folder, AGAIN) if (run / aa).is_file()]
            if again:
                itself[branch.name] = pooled([json.loads(path.read_text()) for path in again])
            events = [
                {**event, "run": index}  # reps are numbered from 1 in each run
                for index, run in enumerate(reports)
                for event in read_events(run / f"{sdk_variant(branch)}.events.jsonl")
            ]
            print(f"   {branch.name} branch: {describe_takes(branch, events)}")
            problem = check_behaviour(branch, events, args.take_ahead, rows)
            if problem:
                problems.append(f"{branch.name} branch: {problem}")
        folder = work / "sim"
        shutil.rmtree(folder, ignore_errors=True)  # a reused folder's simulator runs anew
        folder.mkdir()
        (folder / "jobbench.toml").write_text(toml)
        print(f"== the simulator: {', '.join(model_variant(b) for b in branches_sim[:2])}")
        a, b = (model_variant(x) for x in branches_sim[:2])
        sim = figures(compare(folder, a, b, args.sim_reps, "sim"))
        within = report(rows, real, itself, sim, branches)
        for problem in problems:
            print(f"behaviour: {problem}")
        return 0 if within and not problems else 1
    finally:
        if args.keep or kept:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def build_worktrees(sdk_repo: Path, work: Path, branches: list[Branch]) -> None:
    """The SDK cloned into `work/sdk`, each branch built and checked out at `work/sdk-<name>`."""
    sdk = work / "sdk"
    clone_sdk(sdk_repo, sdk, "fix branches")
    for branch in branches:
        build_branch(sdk, branch)
    git(sdk, "checkout", "-q", "--detach", BASE_TAG)  # each branch runs from a worktree
    for branch in branches:
        git(sdk, "worktree", "add", "-q", str(work / f"sdk-{branch.name}"), branch.name)


if __name__ == "__main__":
    raise SystemExit(main())
