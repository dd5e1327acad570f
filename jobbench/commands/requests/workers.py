"""`jobbench workers`' flags, and the WorkersRequest they make: the worker read and checked
(core/scenario/worker.py), the slots its default if left out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jobbench.commands.requests.flag import REQUIRED, flag
from jobbench.commands.requests.shared import (
    POLICY,
    PYTHON,
    SDK,
    SLOTS,
    TAKE_AHEAD,
    WORKER,
    WORKERS,
)

if TYPE_CHECKING:
    from jobbench.commands.workers import WorkersRequest


@dataclass(frozen=True)
class WorkersFlags:
    """`jobbench workers`' flags, in the order its help lists them."""

    server: str = flag(
        REQUIRED, "--server", metavar="URL", help="the fake queue's URL, e.g. http://10.0.0.5:8000"
    )
    workers: int = WORKERS()
    slots: int | None = SLOTS()
    take_ahead: int = TAKE_AHEAD()
    worker: str = WORKER()
    policy: str | None = POLICY()
    sdk: Path | None = SDK()
    python: str | None = PYTHON()
    api_key: str | None = flag(
        None, "--api-key", metavar="KEY", help="key the queue was started with"
    )
    name: str | None = flag(
        None, "--name", metavar="PREFIX", help="worker id prefix (default HOST-PID)"
    )

    def request(self) -> WorkersRequest:
        from jobbench.commands.workers import WorkersRequest
        from jobbench.core.scenario.build import resolve_slots
        from jobbench.core.scenario.worker import worker_spec

        spec = worker_spec(self.worker, self.policy, self.take_ahead, self.sdk, self.python)
        slots = resolve_slots(self.slots, spec)
        return WorkersRequest(self.server, self.workers, slots, spec, self.api_key, self.name)
