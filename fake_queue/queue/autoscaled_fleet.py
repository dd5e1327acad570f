"""The embedded platform's fleet: RunPod's endpoint scaling (docs/fleet.md) on the queue's clock.

A `Fleet` sits beside a JobQueue and decides, as RunPod's platform would, when a worker starts
and when it stops: active (minimum) workers always run; a scaler rule (scalers.py: queue delay
or request count) evaluated every `period_s` adds workers up to `max_workers`; a worker with no
job for `idle_timeout_s` is stopped. It never runs a process: each decision is an order (start
this worker at this time, stop that one) for an executor, the fake target's runner (worker
processes) or the simulator (model policies in virtual time), which reports back when the
worker's process started and exited. What the fleet sees of a worker's work (its first take,
claims, job ends) the queue tells it through the hooks below. Every decision and every change
of a worker's state is an event in the queue's log (docs/events.md, "Fleet events").

RunPod publishes the settings but not the scaler's exact rules (how often it evaluates, how
many workers one decision adds, whether request count counts jobs in progress): each is a
setting here with a stated default.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from fake_queue.protocol import IN_PROGRESS, IN_QUEUE
from fake_queue.queue.clock import Clock
from fake_queue.queue.event_log import EventLog
from fake_queue.queue.jobs import Job
from fake_queue.queue.latency import Distribution, parse_distribution
from fake_queue.queue.scalers import SCALERS, QueueDelay, Scaler, Seen

# A worker's life: decided (the scale-up; its cold start's modelled part runs), booting (its
# process started), polling (its first take arrived), stopping (the stop decided), stopped.
DECIDED, BOOTING, POLLING, STOPPING, STOPPED = (
    "decided",
    "booting",
    "polling",
    "stopping",
    "stopped",
)
LIVE = (DECIDED, BOOTING, POLLING)
# The events a fleet logs (docs/events.md, "Fleet events").
FLEET_EVENTS = frozenset(
    {
        "fleet_begin",
        "scaler",
        "scale_up",
        "scale_down",
        "worker_start",
        "worker_polling",
        "worker_idle",
        "worker_busy",
        "worker_stop",
    }
)


def worker_index(worker: str) -> int:
    """A worker id's number, `<name>-w12` -> 12 (0 if it has none): w10 sorts after w9."""
    tail = worker.rsplit("w", 1)[-1]
    return int(tail) if tail.isdigit() else 0


class FleetSettingsError(ValueError):
    """A fleet setting that makes no sense: `name` is the setting, the message the fix."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name
        self.problem = problem


@dataclass(frozen=True)
class FleetSettings:
    """An autoscaled endpoint's settings (runpod-protocol.md section 6), and the rules RunPod
    does not publish, as explicit settings with defaults (docs/fleet.md)."""

    max_workers: int = 3
    active: int = 0  # always running, never stopped for idling; started before the rep
    idle_timeout_s: float = 5.0
    scaler: str = QueueDelay.name  # its rule's name (scalers.py); results keep the name
    scaler_value: float = 4.0  # queue delay: seconds a job may wait; request count: jobs a worker
    period_s: float = 1.0  # how often the scaler evaluates
    step: int = 0  # most workers one evaluation adds; 0: the rule's default (queue delay 1, ...)
    count_in_progress: bool = True  # request count: (queued + in progress) / N, else queued / N
    from_zero: bool = True  # queue delay: a job queued while no worker runs starts one at once
    cold_start: Distribution = field(default_factory=lambda: Distribution("fixed", 0.5))
    id_prefix: str = "w"  # worker ids: prefix + index; the active ones are the first indices

    def __post_init__(self) -> None:
        if self.scaler not in SCALERS:
            raise FleetSettingsError(
                "scaler", f"unknown {self.scaler!r}; use {' or '.join(SCALERS)}"
            )
        if self.max_workers < 1:
            raise FleetSettingsError("max_workers", f"must be at least 1, got {self.max_workers}")
        if not 0 <= self.active <= self.max_workers:
            raise FleetSettingsError(
                "active", f"must be 0 to max workers ({self.max_workers}), got {self.active}"
            )
        for name, value in (("idle_timeout_s", self.idle_timeout_s), ("period_s", self.period_s)):
            if not (value > 0 and math.isfinite(value)):
                raise FleetSettingsError(name, f"must be a positive number of seconds, got {value}")
        problem = self.rule.value_problem(self.scaler_value)
        if problem is not None:
            raise FleetSettingsError("scaler_value", problem)
        if self.step < 0:
            raise FleetSettingsError(
                "step", f"must be 0 (the scaler's default) or more, got {self.step}"
            )

    @property
    def rule(self) -> Scaler:
        """The scaler rule `scaler` names."""
        return SCALERS[self.scaler]

    @property
    def added_at_most(self) -> int:
        """Workers one evaluation may add: `step`, or the scaler's default."""
        return self.step or self.rule.default_step(self.max_workers)

    def worker_id(self, index: int) -> str:
        return f"{self.id_prefix}{index}"

    def active_ids(self) -> list[str]:
        return [self.worker_id(i) for i in range(self.active)]

    def to_json(self) -> dict[str, Any]:
        return {
            "max_workers": self.max_workers,
            "active": self.active,
            "idle_timeout_s": self.idle_timeout_s,
            "scaler": self.scaler,
            "scaler_value": self.scaler_value,
            "period_s": self.period_s,
            "step": self.added_at_most,
            "count_in_progress": self.count_in_progress,
            "from_zero": self.from_zero,
            "cold_start": self.cold_start.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], id_prefix: str = "w") -> FleetSettings:
        known = {f for f in cls.__dataclass_fields__ if f != "id_prefix"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise FleetSettingsError(unknown[0], f"unknown fleet setting; known: {sorted(known)}")
        values = dict(data)
        if "cold_start" in values:
            values["cold_start"] = parse_distribution(values["cold_start"], "cold_start")
        return replace(cls(), **values, id_prefix=id_prefix)


@dataclass(eq=False)
class Member:
    """One worker of the fleet, as the platform knows it. Times: the queue's clock, ns."""

    id: str
    active: bool
    state: str
    claims: int = 0  # its takes that claimed jobs not yet delivered
    held: int = 0  # jobs delivered to it, not ended
    idle_since_ns: int | None = None
    idle_timer: asyncio.TimerHandle | None = None


Order = dict[str, Any]  # {"seq", "action": "start" | "stop", "worker", "at"}


class ScaledQueue(Protocol):
    """What the fleet reads of its JobQueue, and the one thing it asks of it."""

    clock: Clock
    tally: Counter[str]
    queued: deque[Job]
    events: EventLog

    def release_long_polls(self, worker: str | None = None) -> int: ...


class Fleet:
    """The platform's scaling decisions for one queue (see the module's docstring)."""

    def __init__(
        self, queue: ScaledQueue, settings: FleetSettings, seed: int | None = None
    ) -> None:
        self.queue = queue
        self.settings = settings
        # Its own generator: the latency model's draws stay what they are without a fleet.
        self.rng = random.Random(None if seed is None else f"fleet/{seed}")
        self.members: dict[str, Member] = {}
        self.orders: list[Order] = []
        self.on_order: Callable[[Order], None] | None = None  # an in-process executor
        self.running = False  # between the rep's first submission and the reset
        self._next_index = settings.active
        self._timer: asyncio.TimerHandle | None = None
        for worker in settings.active_ids():
            self.members[worker] = Member(worker, True, DECIDED)

    # ---- the rep ---------------------------------------------------------------------------
    def begin(self, at: int) -> None:
        """The rep's first submission: active workers are billed from now (the fleet_begin event
        logged here), the scaler starts evaluating, first at once (a job queued with no worker
        running may start one)."""
        if self.running:
            return
        self.running = True
        s = self.settings
        self._log(at, "fleet_begin", scaler=s.scaler, active=s.active, max=s.max_workers)
        self._evaluate()

    def reset(self) -> None:
        """Between reps: the scaler stops; only the active workers and any still running stay
        (the runner waits for the fleet to be at rest before a rep ends), numbered afresh. An
        active worker that ended (a worker fault) is the runner's to replace: it counts again
        once its replacement polls."""
        self.running = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for worker, member in list(self.members.items()):
            if member.state == STOPPED and not member.active:
                del self.members[worker]
                continue
            if member.state == STOPPED:
                member.state = DECIDED
            member.claims, member.held = 0, 0
        self.orders = []
        taken = [worker_index(m.id) for m in self.members.values()]
        self._next_index = max([self.settings.active - 1, *taken]) + 1

    @property
    def at_rest(self) -> bool:
        """Only the active workers run: every scaled-up one has stopped."""
        return all(m.active or m.state == STOPPED for m in self.members.values())

    def live(self) -> list[Member]:
        return [m for m in self.members.values() if m.state in LIVE]

    def view(self) -> dict[str, dict[str, Any]]:
        """Each worker's state (GET /_bench/fleet)."""
        return {
            m.id: {"state": m.state, "active": m.active, "idle": m.idle_since_ns is not None}
            for m in self.members.values()
        }

    # ---- the scaler ------------------------------------------------------------------------
    def _evaluate(self) -> None:
        self._timer = None
        if not self.running:
            return
        s, q = self.settings, self.queue
        at = q.clock.now_ns()
        seen = Seen(
            queued=q.tally[IN_QUEUE],
            in_progress=q.tally[IN_PROGRESS],
            oldest_s=(at - q.queued[0].submitted_ns) / 1e9 if q.queued else 0.0,
            running=len(self.live()),
        )
        decision = s.rule.decide(seen, s)
        add = max(min(decision.add, s.max_workers - seen.running), 0)
        self._log(
            at,
            "scaler",
            queued=seen.queued,
            in_progress=seen.in_progress,
            oldest_s=round(seen.oldest_s, 6),
            running=seen.running,
            target=decision.target,
            add=add,
        )
        for _ in range(add):
            self._start(at, decision.reason)
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(s.period_s, self._evaluate)

    def _start(self, at: int, reason: str) -> None:
        worker = self.settings.worker_id(self._next_index)
        self._next_index += 1
        cold_ns = int(self.settings.cold_start.sample(self.rng) * 1e9)
        member = Member(worker, False, DECIDED)
        self.members[worker] = member
        self._log(at, "scale_up", worker=worker, reason=reason, start_at=at + cold_ns)
        self._order("start", worker, at + cold_ns)

    def _stop(self, member: Member, at: int, reason: str) -> None:
        """Stop deciding: the worker gets no job from now (its waiting takes are answered empty
        at once, and any later one), and the executor sends it SIGTERM."""
        member.state = STOPPING
        self._cancel_idle(member)
        self._log(at, "scale_down", worker=member.id, reason=reason)
        self.queue.release_long_polls(member.id)
        self._order("stop", member.id, at)

    def _order(self, action: str, worker: str, at: int) -> None:
        order = {"seq": len(self.orders), "action": action, "worker": worker, "at": at}
        self.orders.append(order)
        if self.on_order is not None:
            self.on_order(order)

    # ---- what the executor reports ---------------------------------------------------------
    def started(self, worker: str, at: int | None = None) -> None:
        """The worker's process started."""
        member = self.members.get(worker)
        if member is None or member.state != DECIDED:
            return
        member.state = BOOTING
        self._log(self._at(at), "worker_start", worker=worker)

    def exited(self, worker: str, returncode: int | None, at: int | None = None) -> None:
        """The worker's process ended (a stopped one, or one that died)."""
        member = self.members.get(worker)
        if member is None or member.state == STOPPED:
            return
        self._cancel_idle(member)
        member.state = STOPPED
        self._log(self._at(at), "worker_stop", worker=worker, rc=returncode)

    # ---- what the queue tells it -----------------------------------------------------------
    def refuses(self, worker: str) -> bool:
        """A take from a stopping (or stopped) worker gets no job."""
        member = self.members.get(worker)
        return member is not None and member.state in (STOPPING, STOPPED)

    def polled(self, worker: str, at: int) -> None:
        """A take arrived: a worker's first one makes it polling (idle until it gets a job)."""
        member = self.members.get(worker)
        if member is None or member.state not in (DECIDED, BOOTING):
            return
        if member.state == DECIDED:  # an executor that does not report starts (an active one)
            member.state = BOOTING
        member.state = POLLING
        self._log(at, "worker_polling", worker=worker)
        self._maybe_idle(member, at)

    def claimed(self, worker: str) -> None:
        member = self.members.get(worker)
        if member is not None:
            member.claims += 1
            self._busy(member)

    def settled(self, worker: str, delivered: int, at: int) -> None:
        """A take that claimed jobs was answered (with `delivered` of them) or abandoned."""
        member = self.members.get(worker)
        if member is not None:
            member.claims -= 1
            member.held += delivered
            self._maybe_idle(member, at)

    def ended(self, worker: str, at: int) -> None:
        """A job delivered to `worker` ended (done, failed, cancelled, timed out)."""
        member = self.members.get(worker)
        if member is not None:
            member.held = max(member.held - 1, 0)
            self._maybe_idle(member, at)

    def _busy(self, member: Member) -> None:
        if member.idle_since_ns is not None:
            self._cancel_idle(member)
            self._log(self.queue.clock.now_ns(), "worker_busy", worker=member.id)

    def _maybe_idle(self, member: Member, at: int) -> None:
        if member.state != POLLING or member.claims or member.held or member.idle_since_ns:
            return
        member.idle_since_ns = at
        self._log(at, "worker_idle", worker=member.id)
        if not member.active:
            delay = max(at + int(self.settings.idle_timeout_s * 1e9) - self.queue.clock.now_ns(), 0)
            loop = asyncio.get_running_loop()
            member.idle_timer = loop.call_later(delay / 1e9, self._idle_out, member, at)

    def _idle_out(self, member: Member, since: int) -> None:
        member.idle_timer = None
        if member.idle_since_ns == since and member.state == POLLING:
            self._stop(
                member, self.queue.clock.now_ns(), f"idle {self.settings.idle_timeout_s:g} s"
            )

    def _cancel_idle(self, member: Member) -> None:
        member.idle_since_ns = None
        if member.idle_timer is not None:
            member.idle_timer.cancel()
            member.idle_timer = None

    # ---- the log -----------------------------------------------------------------------------
    def _at(self, at: int | None) -> int:
        return self.queue.clock.now_ns() if at is None else at

    def _log(self, at: int, ev: str, **fields: Any) -> None:
        self.queue.events.append({"t": at, "ev": ev, **fields})
