"""A user worker (real runpod SDK) whose handler kills the process on a `crash` input."""

import asyncio
import os
import sys

import runpod


async def handler(job):
    if job["input"].get("crash"):
        print("crash_handler: dying on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    await asyncio.sleep(job["input"].get("seconds", 0))
    return {"ok": True}


if __name__ == "__main__":
    runpod.serverless.start({"handler": handler, "concurrency_modifier": lambda _: 4})
