"""Running one job as runpod 1.12.0's run_job does: the bench handler, and the job-done body
it makes of the handler's return or error. Stdlib only (no aiohttp): both links use it, the
HTTP one (http_link.HttpLink) and the in-process one (queue_link.QueueLink)."""

from __future__ import annotations

import json
import os
import traceback
from typing import Any

from jobbench.workers.bench_handler import bench_handler
from jobbench.workers.policy_base import Job

RUNPOD_VERSION = "1.12.0"  # the SDK whose protocol the model worker speaks


async def run_handler(job: Job, worker_id: str, started: float | None = None) -> dict[str, Any]:
    """The job-done body, shaped as 1.12.0's run_job shapes it. `started`: when the job got
    its slot (event loop time), if before now."""
    try:
        output: Any = await bench_handler(job, started)
    except Exception as exc:
        info = {
            "error_type": str(type(exc)),
            "error_message": str(exc),
            "error_traceback": traceback.format_exc(),
            "hostname": os.environ.get("RUNPOD_POD_HOSTNAME", "unknown"),
            "worker_id": worker_id,
            "runpod_version": RUNPOD_VERSION,
        }
        return {"error": json.dumps(info)}
    result: dict[str, Any] = {"output": output}
    if isinstance(output, dict):
        error, refresh = output.pop("error", None), output.pop("refresh_worker", None)
        if error:
            result["error"] = error
        if refresh:
            result["stopPod"] = True
    if result.get("output") == {}:
        del result["output"]
    return result
