"""What workers and clients need to know of the queue's protocol, without the server: the worker
URL templates and env (docs/protocol.md 1.2 / 3.1), the job statuses, and the model worker's
policy names and take-ahead rules. Stdlib only and importing nothing: worker processes and the
live client import it without aiohttp or the app.
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
# worker's id. 1.12.0 derives the job-stop and job-take-batch URLs from the job-take one.
TAKE_SEGMENT = "/job-take/"
TAKE_BATCH_SEGMENT = "/job-take-batch/"
STOP_SEGMENT = "/job-stop/"
TAKE_URL = "{endpoint}/job-take/$ID?gpu=cpu"
DONE_URL = "{endpoint}/job-done/$RUNPOD_POD_ID/$ID?gpu=cpu"
STREAM_URL = "{endpoint}/job-stream/$RUNPOD_POD_ID/$ID?gpu=cpu"
PING_URL = "{endpoint}/ping/$RUNPOD_POD_ID?gpu=cpu"

# The model worker's policies (docs/latency-model.md, "Policies the model worker reproduces").
SDK_112 = "sdk-1.12"
DRAIN = "drain"
TAKE_AHEAD = "take-ahead"
POLICIES = (SDK_112, DRAIN, TAKE_AHEAD)
DEFAULT_POLICY = DRAIN  # the worker's, when JOBBENCH_POLICY is unset

# What take_ahead_problem finds wrong with a policy and a take-ahead K.
NEEDS_TAKE_AHEAD = "needs K > 0"  # take-ahead with K == 0
NO_TAKE_AHEAD = "has no take-ahead"  # another policy with K > 0


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


def policy_for(take_ahead: int) -> str:
    """The policy of a model worker the user named none for: take-ahead with K > 0, else drain."""
    return TAKE_AHEAD if take_ahead else DRAIN


def take_ahead_problem(policy: str, take_ahead: int) -> str | None:
    """NEEDS_TAKE_AHEAD, NO_TAKE_AHEAD, or None when `policy` and K go together."""
    if policy == TAKE_AHEAD and take_ahead == 0:
        return NEEDS_TAKE_AHEAD
    if policy != TAKE_AHEAD and take_ahead > 0:
        return NO_TAKE_AHEAD
    return None


def effective_take_ahead(policy: str, take_ahead: int) -> int:
    """The K a policy runs with: only take-ahead takes ahead."""
    return take_ahead if policy == TAKE_AHEAD else 0
