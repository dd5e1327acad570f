"""A user worker (real runpod SDK) whose handler raises on a `fail` input: a job that fails."""

import asyncio
import os

import runpod


async def handler(job):
    await asyncio.sleep(job["input"].get("seconds", 0))
    if job["input"].get("fail"):
        raise RuntimeError("flaky_handler: failing on purpose")
    return {"ok": True}


if __name__ == "__main__":
    # As many at once as the run's --slots: the SDK re-checks a full worker once a second, so
    # one wave of the burst, not five, keeps the rep short.
    slots = int(os.environ["JOBBENCH_SLOTS"])
    runpod.serverless.start({"handler": handler, "concurrency_modifier": lambda _: slots})
