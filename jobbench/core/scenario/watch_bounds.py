"""How long the watchdog lets a worker be quiet (docs/reliability.md, "The watchdog"): the
stall, give-up and overdue bounds, from the scenario alone. The fake target's watchdog
(core/real_workers/watchdog.py) and its wait for the workers to poll use them; the simulator ends a
rep whose model hangs at the same give-up bound (core/sim/engine.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from jobbench.core.scenario.config import Scenario

STALL_FLOOR_S = 5.0  # below this a busy 2-core box's scheduling gaps would read as stalls
GIVE_UP_FACTOR = 4  # longer than the pauses a resilience run inflicts on purpose (20 s at least)


@dataclass(frozen=True)
class WatchBounds:
    stall_s: float
    give_up_s: float
    overdue_s: float


def watch_bounds(s: Scenario) -> WatchBounds:
    """From the scenario (docs/reliability.md, "The watchdog"): a working worker takes or
    reports within about two job lengths and a take; a held job waits at most one job length per
    round of its worker's slots (and take-ahead buffer). `s.stall_s` (--stall-after) sets the
    stall bound instead, and the others follow it."""
    job, take, wake = s.job_seconds, s.latency.take.mean, s.latency.wake.mean
    stall = s.stall_s or max(STALL_FLOOR_S, 2 * job + take + wake + 1.0)
    rounds = math.ceil((s.slots + s.worker.take_ahead) / s.slots)
    return WatchBounds(
        stall_s=round(stall, 3),
        give_up_s=round(GIVE_UP_FACTOR * stall, 3),
        overdue_s=round(2 * stall + 2 * job * (rounds + 1) + take, 3),
    )
