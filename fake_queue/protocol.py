"""What the queue's server, its workers and its clients share of the protocol: the job statuses and
the worker URL templates and env (docs/protocol.md 1.2 / 3.1). Stdlib only and importing nothing:
worker processes and the live client import it without aiohttp or the app. How a worker schedules
its takes (the model worker's policies, take-ahead) is the workers' own, in
jobbench/workers/policies.py: the server never schedules a take.
"""

from __future__ import annotations

# Job statuses: RunPod's, as /status and /_bench answer them.
IN_QUEUE = "IN_QUEUE"
IN_PROGRESS = "IN_PROGRESS"
COMPLETED = "COMPLETED"
FAILED = "FAILED"
CANCELLED = "CANCELLED"
TIMED_OUT = "TIMED_OUT"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED, TIMED_OUT})

# Worker routes under an endpoint URL; $ID and $RUNPOD_POD_ID are the SDK's placeholders, both the
# worker's id.
TAKE_URL = "{endpoint}/job-take/$ID?gpu=cpu"
DONE_URL = "{endpoint}/job-done/$RUNPOD_POD_ID/$ID?gpu=cpu"
STREAM_URL = "{endpoint}/job-stream/$RUNPOD_POD_ID/$ID?gpu=cpu"
PING_URL = "{endpoint}/ping/$RUNPOD_POD_ID?gpu=cpu"


def worker_env(endpoint_url: str, worker_id: str | None = None) -> dict[str, str]:
    """The RunPod worker env vars (docs/protocol.md 1.2 / 3.1) that point a worker at
    `endpoint_url` (the queue's /v2/ENDPOINT_ID URL)."""
    env = {
        "RUNPOD_WEBHOOK_GET_JOB": TAKE_URL.format(endpoint=endpoint_url),
        "RUNPOD_WEBHOOK_POST_OUTPUT": DONE_URL.format(endpoint=endpoint_url),
        "RUNPOD_WEBHOOK_POST_STREAM": STREAM_URL.format(endpoint=endpoint_url),
        "RUNPOD_WEBHOOK_PING": PING_URL.format(endpoint=endpoint_url),
        "RUNPOD_SKIP_AUTO_SYSTEM_CHECKS": "true",
        "RUNPOD_SKIP_GPU_CHECK": "true",
        "RUNPOD_LOG_LEVEL": "WARN",
    }
    if worker_id is not None:
        env["RUNPOD_POD_ID"] = worker_id
    return env
