"""A user worker (real runpod SDK) whose handler raises on a `fail` input: a job that fails."""

import asyncio

import runpod


async def handler(job):
    await asyncio.sleep(job["input"].get("seconds", 0))
    if job["input"].get("fail"):
        raise RuntimeError("flaky_handler: failing on purpose")
    return {"ok": True}


if __name__ == "__main__":
    runpod.serverless.start({"handler": handler, "concurrency_modifier": lambda _: 4})
