"""Scheduling policies of the policy-model worker (docs/latency-model.md, "Policies the model
worker reproduces"), and `make_policy`, which picks one by name.

`Sdk112Policy` (policy_sdk112) ports runpod 1.12.0's JobScaler loops (docs/protocol.md section
2), and two fixes run on those same loops: `SdkTakeAheadPolicy` (policy_sdk_take_ahead, the
take-ahead pull request) and `JobCachePolicy` (policy_job_cache, runpod-python #429).
`DrainPolicy` and `TakeAheadPolicy` (policy_drain) are jobbench's event-driven drain and ideal
take-ahead; what all of them share is in policy_base. Policies reach the queue only through a
`Link` (http_link.HttpLink over HTTP, queue_link.QueueLink in-process), so these modules hold no
HTTP code. Stdlib only, and no clock but the running loop's: on a virtual-time loop
(fake_queue.queue.virtual_clock) the same policies run in virtual time.
"""

from __future__ import annotations

from jobbench.workers.policies import JOB_CACHE, SDK_112, SDK_TAKE_AHEAD, TAKE_AHEAD
from jobbench.workers.policy_base import Link, Policy
from jobbench.workers.policy_drain import (
    POST_HOLD_MAX_S,
    POST_QUIET_S,
    DrainPolicy,
    TakeAheadPolicy,
)
from jobbench.workers.policy_job_cache import JobCachePolicy
from jobbench.workers.policy_sdk112 import AS_THE_LOOP_KEEPS_IT, LoopTiming, Sdk112Policy
from jobbench.workers.policy_sdk_take_ahead import SdkTakeAheadPolicy


def make_policy(
    name: str,
    link: Link,
    slots: int,
    take_ahead: int,
    *,
    post_quiet_s: float = POST_QUIET_S,
    post_hold_max_s: float = POST_HOLD_MAX_S,
    timing: LoopTiming = AS_THE_LOOP_KEEPS_IT,
) -> Policy:
    """The policy `name` (policies.POLICIES); the post timing is drain's and take-ahead's, the
    loop's timing the SDK-based policies' (policies.SDK_BASED), and only take-ahead and
    sdk-take-ahead read `take_ahead`."""
    if name == SDK_112:
        return Sdk112Policy(link, slots, timing)
    if name == SDK_TAKE_AHEAD:
        return SdkTakeAheadPolicy(link, slots, take_ahead, timing=timing)
    if name == JOB_CACHE:
        return JobCachePolicy(link, slots, timing)
    if name == TAKE_AHEAD:
        return TakeAheadPolicy(
            link, slots, take_ahead, post_quiet_s=post_quiet_s, post_hold_max_s=post_hold_max_s
        )
    return DrainPolicy(link, slots, post_quiet_s=post_quiet_s, post_hold_max_s=post_hold_max_s)
