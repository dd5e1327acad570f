"""A worker with one planted defect, as a pull request could bring it: a user command
(`worker = "python planted_worker.py --defect late-start"`) that speaks the RunPod worker
protocol from the environment jobbench gives every worker (docs/workers.md: the job-take and
job-done URL templates, the worker id, the key, JOBBENCH_SLOTS) with aiohttp, and runs
JOBBENCH_SLOTS jobs at once, each sleeping its input's `seconds`.

`--defect` plants one thing (the reference worker is `none`):

- `fail`: every 20th job it takes fails at once (an error result): 5 % of its jobs;
- `spin`: a thread keeps a core busy for the worker's whole life (in hashing, which releases
  the GIL: the worker's own timing barely moves, its CPU does);
- `late-start`: a job taken while others run starts only when one of them finishes (a
  scheduling bug the runpod SDK once had): a burst taken by an idle worker runs at once, a
  trickle of jobs waits;
- `stall-on-429`: after a take answered 429 while busy (jobs got within 1 s) it waits
  `--stall-s` before it takes again (the
  reference waits 50 ms);
- `greedy`: it takes far more jobs than its slots and holds what it cannot run yet, so one
  worker gets a whole burst while the others idle;
- `hang-when-idle`: once it has run jobs and holds none, it never takes again: with a burst no
  larger than its slots, it hangs between the first rep and the next.

`--note TEXT` changes nothing: two variants that differ only in it are a comment-only change.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import threading
import time
from typing import Any

import aiohttp

DEFECTS = ("none", "fail", "spin", "late-start", "stall-on-429", "greedy", "hang-when-idle")
FAIL_EVERY = 20  # the `fail` defect: one job in 20 is 5 %
RETRY_AFTER_429_S = 0.05  # the reference worker's pause after a 429
GREEDY_FACTOR = 16  # the `greedy` defect asks for 16 x its slots
# Once a full worker's first slot frees, it waits this long before it asks again, so jobs that
# ended together are asked for in one take: without it, whether the first take asks for one
# slot or all of them is a race of microseconds, and a rep's time jumps by a take.
GATHER_S = 0.005
BUSY_S = 1.0  # stall-on-429 stalls only a worker that got jobs this recently


class RateLimited(Exception):
    """A take answered 429."""


class Worker:
    def __init__(self, defect: str, stall_s: float) -> None:
        self.defect = defect
        self.stall_s = stall_s
        self.worker_id = os.environ["RUNPOD_POD_ID"]
        self.slots = int(os.environ.get("JOBBENCH_SLOTS", "1"))
        take_url = os.environ["RUNPOD_WEBHOOK_GET_JOB"].replace("$ID", self.worker_id)
        self.batch_url = take_url.replace("/job-take/", "/job-take-batch/")
        self.done_url = os.environ["RUNPOD_WEBHOOK_POST_OUTPUT"].replace(
            "$RUNPOD_POD_ID", self.worker_id
        )
        self.headers = {"Authorization": os.environ.get("RUNPOD_AI_API_KEY", "")}
        self.held = 0  # taken, not yet reported: what the next take must leave room for
        self.running = 0  # started, not yet reported
        self.ran = 0  # jobs taken so far, for `fail`
        self.last_jobs_at = -math.inf  # when a take last got jobs (monotonic)
        self.slot_free = asyncio.Event()
        self.one_finished = asyncio.Event()  # set and cleared each time a running job ends
        self.run_gate = asyncio.Semaphore(self.slots)  # never more than `slots` run at once

    @property
    def capacity(self) -> int:
        return self.slots * (GREEDY_FACTOR if self.defect == "greedy" else 1)

    async def serve(self) -> None:
        timeout = aiohttp.ClientTimeout(total=90)
        async with aiohttp.ClientSession(headers=self.headers, timeout=timeout) as http:
            tasks: set[asyncio.Task[None]] = set()
            while True:
                if self.defect == "hang-when-idle" and self.ran and not self.held:
                    await asyncio.Event().wait()  # never set: silent for good
                room = self.capacity - self.held
                if room <= 0:
                    self.slot_free.clear()
                    await self.slot_free.wait()
                    await asyncio.sleep(GATHER_S)
                    continue
                try:
                    jobs = await self.take(http, room)
                except RateLimited:
                    # The defect stalls a busy worker (one that got jobs within BUSY_S): an idle
                    # worker between reps retries as the reference does, so each rep starts with
                    # every worker polling, and the stall lands where jobs wait.
                    busy = time.monotonic() - self.last_jobs_at < BUSY_S
                    stalls = self.defect == "stall-on-429" and busy
                    await asyncio.sleep(self.stall_s if stalls else RETRY_AFTER_429_S)
                    continue
                except (TimeoutError, aiohttp.ClientError):
                    await asyncio.sleep(0.05)
                    continue
                if jobs:
                    self.last_jobs_at = time.monotonic()
                late = self.defect == "late-start" and self.running > 0
                for job in jobs:
                    self.held += 1
                    task = asyncio.create_task(self.run(http, job, late))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)

    async def take(self, http: aiohttp.ClientSession, room: int) -> list[dict[str, Any]]:
        busy = int(self.held > 0)
        url = f"{self.batch_url}&batch_size={room}&job_in_progress={busy}"
        async with http.get(url) as answer:
            if answer.status == 429:
                raise RateLimited()
            if answer.status != 200:
                return []
            jobs: list[dict[str, Any]] = await answer.json(content_type=None) or []
            return jobs

    async def run(self, http: aiohttp.ClientSession, job: dict[str, Any], late: bool) -> None:
        self.ran += 1
        fails = self.defect == "fail" and self.ran % FAIL_EVERY == 0
        try:
            if late and self.running > 0:
                await self.one_finished.wait()
            async with self.run_gate:
                self.running += 1
                try:
                    if fails:
                        await self.report(http, job, {"error": "planted failure"})
                        return
                    await asyncio.sleep(float(job["input"].get("seconds", 0)))
                    await self.report(http, job, {"output": {"ok": True}})
                finally:
                    self.running -= 1
                    self.one_finished.set()
                    self.one_finished.clear()
        finally:
            self.held -= 1
            self.slot_free.set()

    async def report(
        self, http: aiohttp.ClientSession, job: dict[str, Any], body: dict[str, Any]
    ) -> None:
        url = self.done_url.replace("$ID", str(job["id"])) + "&isStream=false"
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        async with http.post(url, data=json.dumps(body), headers=form) as answer:
            await answer.read()


def spin() -> None:
    """Busy in C without the GIL: sha256 of 1 MiB releases it while it hashes."""
    block = b"x" * (1 << 20)
    while True:
        hashlib.sha256(block).digest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--defect", choices=DEFECTS, default="none")
    parser.add_argument("--stall-s", type=float, default=2.0, help="stall-on-429's pause")
    parser.add_argument("--note", default="", help="changes nothing (a comment-only change)")
    args = parser.parse_args()
    if args.defect == "spin":
        threading.Thread(target=spin, daemon=True).start()
    asyncio.run(Worker(args.defect, args.stall_s).serve())


if __name__ == "__main__":
    main()
