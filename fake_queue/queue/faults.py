"""Fault injection (`--fault ROUTE:KIND:RATE`) and RunPod's documented rate limits (429)."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

from fake_queue.queue.clock import MONOTONIC, Clock

WORKER_ROUTES = ("job-take", "job-take-batch", "job-done", "job-stream", "job-stop", "ping")
CLIENT_ROUTES = ("run", "runsync", "status", "stream", "cancel", "retry", "purge-queue", "health")
ROUTES = WORKER_ROUTES + CLIENT_ROUTES

# Requests per 10 s and concurrent requests, per endpoint (docs/protocol.md section 4).
RUNPOD_RATE_LIMITS: dict[str, tuple[int, int | None]] = {
    "runsync": (2000, 400),
    "run": (1000, 200),
    "status": (2000, 400),
    "stream": (2000, 400),
    "cancel": (100, 20),
    "purge-queue": (2, None),
}
RATE_WINDOW_S = 10.0
RATE_WINDOW_NS = int(RATE_WINDOW_S * 1e9)


class FaultSpecError(ValueError):
    """A `--fault` value that cannot be parsed."""


@dataclass(frozen=True)
class FaultRule:
    """On `route` (or `*`), with probability `rate`: answer `status`, drop the connection,
    or add `delay_s` before handling."""

    route: str
    kind: str  # "status" | "drop" | "delay"
    rate: float
    status: int = 0
    delay_s: float = 0.0

    @property
    def effect(self) -> str:
        """What it does, as written: `500`, `drop` or `delay=0.2`."""
        return {"status": str(self.status), "drop": "drop", "delay": f"delay={self.delay_s:g}"}[
            self.kind
        ]

    def describe(self) -> str:
        return f"{self.route}:{self.effect}:{self.rate:g}"


def parse_fault(text: str) -> FaultRule:
    """`job-done:500:0.1`, `run:429:0.05`, `job-take:drop:0.01`, `status:delay=0.2:0.5`."""
    parts = text.split(":")
    hint = (
        "write ROUTE:KIND:RATE, e.g. job-done:500:0.1, run:429:0.05, job-take:drop:0.01 or "
        "status:delay=0.2:0.5"
    )
    if len(parts) != 3:
        raise FaultSpecError(f"--fault {text!r}: {hint}")
    route, kind, rate_text = parts
    if route != "*" and route not in ROUTES:
        raise FaultSpecError(
            f"--fault {text!r}: unknown route {route!r}; use * or one of {', '.join(ROUTES)}"
        )
    try:
        rate = float(rate_text)
    except ValueError:
        raise FaultSpecError(f"--fault {text!r}: RATE must be a number in [0, 1]") from None
    if not 0.0 <= rate <= 1.0:
        raise FaultSpecError(f"--fault {text!r}: RATE must be in [0, 1]")
    if kind == "drop":
        return FaultRule(route, "drop", rate)
    if kind.startswith("delay="):
        try:
            delay = float(kind.removeprefix("delay="))
        except ValueError:
            raise FaultSpecError(f"--fault {text!r}: delay=SECONDS needs a number") from None
        if delay < 0:
            raise FaultSpecError(f"--fault {text!r}: delay must be >= 0 seconds")
        return FaultRule(route, "delay", rate, delay_s=delay)
    if kind.isdigit() and 400 <= int(kind) <= 599:
        return FaultRule(route, "status", rate, status=int(kind))
    raise FaultSpecError(
        f"--fault {text!r}: KIND must be an HTTP status 400-599, drop or delay=SECONDS"
    )


class FaultInjector:
    """Decides, per request, which fault (if any) applies. Seeded, so runs repeat."""

    def __init__(self, rules: tuple[FaultRule, ...], seed: int | None) -> None:
        self.seed = seed
        self.set_rules(rules)

    def set_rules(self, rules: tuple[FaultRule, ...]) -> None:
        """New rules, drawn from a fresh seeded generator: a scenario's faults repeat."""
        self.rules = rules
        self._rng = random.Random(self.seed)

    def pick(self, route: str) -> FaultRule | None:
        for rule in self.rules:
            matches = rule.route == route or (rule.route == "*" and route in ROUTES)
            if matches and self._rng.random() < rule.rate:
                return rule
        return None


class RateLimiter:
    """RunPod's per-endpoint limits: a sliding 10 s window and a cap on concurrent requests.
    The window runs on `clock` (the queue's)."""

    def __init__(self, limits: dict[str, tuple[int, int | None]], clock: Clock = MONOTONIC) -> None:
        self.limits = limits
        self.clock = clock
        self._recent: dict[str, deque[int]] = {route: deque() for route in limits}
        self._active: dict[str, int] = dict.fromkeys(limits, 0)

    def admit(self, route: str) -> bool:
        """True if the request may proceed; the caller must call `release` after it."""
        limit = self.limits.get(route)
        if limit is None:
            return True
        per_window, concurrent = limit
        now = self.clock.now_ns()
        recent = self._recent[route]
        while recent and now - recent[0] >= RATE_WINDOW_NS:
            recent.popleft()
        if len(recent) >= per_window or (
            concurrent is not None and self._active[route] >= concurrent
        ):
            return False
        recent.append(now)
        self._active[route] += 1
        return True

    def release(self, route: str) -> None:
        if route in self._active:
            self._active[route] -= 1
