"""How jobbench's own workers schedule their takes, in words every layer shares: the model worker's
policy names (docs/latency-model.md, "Policies the model worker reproduces"), the rule on a policy
and a take-ahead K, and the one environment variable each setting reaches a worker under.

One name per setting, jobbench's own: `JOBBENCH_POLICY` (the model worker's policy),
`JOBBENCH_SLOTS` (jobs one worker runs at once) and `JOBBENCH_TAKE_AHEAD` (K). The runpod SDK
reads none of them: `runpod_entry.py` hands the SDK slots and K as its `concurrency_modifier` and
`take_ahead` config keys, which is how an SDK build with take-ahead is given it; the model
worker reads them itself (policy_worker_config.py). A user command gets only the SDK's own
RUNPOD_* variables (docs/workers.md).

Here, below the layers that use these words (the scenario's checks, the sweep, the simulator,
the analytic model, the words a report prints) rather than in fake_queue, whose server never
schedules a take. Standard library only and importing nothing, in syntax any Python 3 that runs
an SDK worker reads: the model worker imports it at start-up, and `runpod_entry.py` imports it
from beside itself in the SDK's own environment, where jobbench is not installed.
"""

from __future__ import annotations

SDK_112 = "sdk-1.12"  # runpod 1.12.0's JobScaler loops, ported (policy_sdk112.py)
DRAIN = "drain"  # when full, wait until drained, then take a full batch at once
TAKE_AHEAD = "take-ahead"  # drain, and after a take that came back full ask for K more
# The fixes on the SDK's own mechanics (sdk-1.12's tick, re-check and slot release):
SDK_TAKE_AHEAD = "sdk-take-ahead"  # the take-ahead pull request's rules (policy_sdk_take_ahead.py)
JOB_CACHE = "job-cache"  # runpod-python #429's job cache (policy_job_cache.py)
POLICIES = (SDK_112, DRAIN, TAKE_AHEAD, SDK_TAKE_AHEAD, JOB_CACHE)
TAKES_AHEAD = (TAKE_AHEAD, SDK_TAKE_AHEAD)  # the policies that read a take-ahead K
SDK_BASED = (SDK_112, SDK_TAKE_AHEAD, JOB_CACHE)  # 1.12.0's loops, and its HTTP client
DEFAULT_POLICY = DRAIN  # the model worker's, when JOBBENCH_POLICY is unset
DEFAULT_SLOTS = 32  # the runpod SDK's design, and the model worker's; a command's is its own

# Each setting's name in a worker's environment.
POLICY_ENV = "JOBBENCH_POLICY"
SLOTS_ENV = "JOBBENCH_SLOTS"
TAKE_AHEAD_ENV = "JOBBENCH_TAKE_AHEAD"

# What take_ahead_problem finds wrong with a policy and a take-ahead K.
NEEDS_TAKE_AHEAD = "needs K > 0"  # take-ahead with K == 0
NO_TAKE_AHEAD = "has no take-ahead"  # another policy with K > 0


def policy_for(take_ahead: int) -> str:
    """The policy of a model worker the user named none for: take-ahead with K > 0, else drain."""
    return TAKE_AHEAD if take_ahead else DRAIN


def take_ahead_problem(policy: str, take_ahead: int) -> str | None:
    """NEEDS_TAKE_AHEAD, NO_TAKE_AHEAD, or None when `policy` and K go together."""
    if policy in TAKES_AHEAD and take_ahead == 0:
        return NEEDS_TAKE_AHEAD
    if policy not in TAKES_AHEAD and take_ahead > 0:
        return NO_TAKE_AHEAD
    return None
