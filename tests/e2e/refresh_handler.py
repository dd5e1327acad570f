"""A user worker (real runpod SDK) that asks to be refreshed (refresh_worker), each of a run's
workers its own way: w0's handler returns `refresh_worker: True` on the second job each of its
processes runs; w1 starts with `refresh_worker` in its config (every job asks, and the SDK exits
by itself once it has posted them). Each job appends "<worker id> <pid>" to the file
REFRESH_PIDS."""

import asyncio
import os

import runpod

WORKER = os.environ["RUNPOD_POD_ID"]
BY_CONFIG = WORKER.endswith("-w1")
RAN = 0


async def handler(job):
    global RAN
    RAN += 1
    with open(os.environ["REFRESH_PIDS"], "a") as pids:
        pids.write(f"{WORKER} {os.getpid()}\n")
    await asyncio.sleep(job["input"].get("seconds", 0))
    if not BY_CONFIG and RAN == 2:
        return {"ok": True, "refresh_worker": True}
    return {"ok": True}


if __name__ == "__main__":
    slots = int(os.environ["JOBBENCH_SLOTS"])
    config = {"handler": handler, "concurrency_modifier": lambda _: slots}
    if BY_CONFIG:
        config["refresh_worker"] = True
    runpod.serverless.start(config)
