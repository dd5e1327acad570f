"""The faults a scenario runs with: the queue's (`--fault ROUTE:KIND:RATE`, fake_queue.queue.faults)
and the workers' (`--worker-fault kill:AT[:wN]`, `term:AT[:wN]`, `pause:AT:FOR[:wN]`): a worker
process killed (SIGKILL to its group, as a node dies), stopped as the platform stops one
(SIGTERM: its own shutdown finishes and posts the jobs it holds, then it exits) or paused
(SIGSTOP, then SIGCONT FOR seconds later) AT seconds into every rep. With faults, lost and
redelivered jobs are what a run measures."""

from __future__ import annotations

import math
from dataclasses import dataclass

from fake_queue.api import FaultSpecError, parse_fault
from jobbench.errors import UsageError

WORKER_FAULT_HINT = (
    "write kill:AT[:wN], term:AT[:wN] or pause:AT:FOR[:wN], e.g. kill:2 or pause:1.5:10:w1"
)
ACTIONS = ("kill", "term", "pause")


@dataclass(frozen=True)
class WorkerFault:
    action: str  # "kill" | "term" | "pause"
    at_s: float
    for_s: float = 0.0  # pause only
    worker: int = 0  # index in the scenario's fleet: w0, w1, ...

    def describe(self) -> str:
        span = f":{self.for_s:g}" if self.action == "pause" else ""
        return f"{self.action}:{self.at_s:g}{span}:w{self.worker}"


def queue_faults(rules: tuple[str, ...] | list[str], flag: str = "--fault") -> tuple[str, ...]:
    """The queue's rules, checked and written one way (`job-done:500:0.1`)."""
    try:
        return tuple(parse_fault(str(rule)).describe() for rule in rules)
    except FaultSpecError as exc:
        raise UsageError(str(exc).replace("--fault", flag, 1)) from None


def parse_worker_fault(text: str, flag: str = "--worker-fault") -> WorkerFault:
    parts = text.split(":")
    action = parts[0]
    if action not in ACTIONS:
        raise UsageError(f"{flag} {text!r}: unknown action {action!r}; {WORKER_FAULT_HINT}")
    numbers = 2 if action == "pause" else 1
    worker = 0
    if len(parts) == numbers + 2:
        worker = _worker_index(parts.pop(), text, flag)
    if len(parts) != numbers + 1:
        raise UsageError(f"{flag} {text!r}: {WORKER_FAULT_HINT}")
    at_s = _seconds(parts[1], "AT", text, flag)
    for_s = _seconds(parts[2], "FOR", text, flag) if action == "pause" else 0.0
    if action == "pause" and for_s <= 0:
        raise UsageError(f"{flag} {text!r}: FOR must be > 0 seconds")
    return WorkerFault(action, at_s, for_s, worker)


def worker_faults(texts: tuple[str, ...] | list[str], flag: str) -> tuple[WorkerFault, ...]:
    return tuple(parse_worker_fault(str(text), flag) for text in texts)


def check_worker_faults(
    faults: tuple[WorkerFault, ...], workers: int, flag: str, autoscaled: bool = False
) -> None:
    """Each fault's worker runs from the rep's start: one of the fixed fleet's `workers`, or of
    an autoscaled fleet's `workers` active ones."""
    for fault in faults:
        if fault.worker >= workers:
            fleet = f"{workers} active workers" if autoscaled else f"a fleet of {workers}"
            have = f" (w0..w{workers - 1})" if workers else ""
            raise UsageError(
                f"{flag} {fault.describe()}: there is no worker w{fault.worker} in {fleet}{have}"
            )


def _seconds(text: str, name: str, whole: str, flag: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{flag} {whole!r}: {name} must be seconds >= 0; {WORKER_FAULT_HINT}")
    return value


def _worker_index(text: str, whole: str, flag: str) -> int:
    if text.startswith("w") and text[1:].isdigit():
        return int(text[1:])
    raise UsageError(f"{flag} {whole!r}: the worker is w0, w1, ...; {WORKER_FAULT_HINT}")
