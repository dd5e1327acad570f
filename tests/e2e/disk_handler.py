"""A user worker (real runpod SDK) that, on a `write` input, keeps its in-progress job on disk:
the file rewritten and fsynced on every job, as a worker saving its state would."""

import asyncio
import os

import runpod


async def handler(job):
    if job["input"].get("write"):
        with open("in_progress.txt", "w") as saved:  # in the worker's own folder (its cwd)
            saved.write(job["id"])
            saved.flush()
            os.fsync(saved.fileno())
    await asyncio.sleep(job["input"].get("seconds", 0))
    return {"ok": True}


if __name__ == "__main__":
    # As many at once as the run's --slots: one wave of the burst keeps the rep short.
    slots = int(os.environ["JOBBENCH_SLOTS"])
    runpod.serverless.start({"handler": handler, "concurrency_modifier": lambda _: slots})
