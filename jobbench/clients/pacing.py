"""Client-side pacing for a live endpoint: request windows, steady rates and retry backoff."""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import deque
from typing import Protocol


class Pacer(Protocol):
    async def acquire(self) -> None: ...


class WindowPacer:
    """At most `limit` request starts in any `window_s` (RunPod counts per 10 s per endpoint)."""

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._starts: deque[float] = deque()

    async def acquire(self) -> None:
        while True:
            now = time.monotonic()
            while self._starts and now - self._starts[0] >= self.window_s:
                self._starts.popleft()
            if len(self._starts) < self.limit:
                self._starts.append(now)
                return
            await asyncio.sleep(self._starts[0] + self.window_s - now)


class RatePacer:
    """A steady `per_s` starts per second (`--submit-rate N/s`); inf means no pacing."""

    def __init__(self, per_s: float) -> None:
        self.interval = 0.0 if math.isinf(per_s) else 1.0 / per_s
        self._next = 0.0

    async def acquire(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        at = max(now, self._next)
        self._next = at + self.interval
        if at > now:
            await asyncio.sleep(at - now)


def backoff_s(
    attempt: int,
    retry_after_s: float | None = None,
    base_s: float = 0.2,
    cap_s: float = 5.0,
    rng: random.Random | None = None,
) -> float:
    """Full jitter (uniform in [0, base * 2^attempt], capped), never under a Retry-After."""
    ceiling = min(cap_s, base_s * 2**attempt)
    jitter = (rng or random).uniform(0.0, ceiling)
    return max(jitter, retry_after_s or 0.0)
