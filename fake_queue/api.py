"""What jobbench and the benchmarks may use of the fake queue: its public surface, in one place.

The surface is this module and four modules imported directly, each on the standard library
alone, so that what imports them pays for nothing else:

- `fake_queue.protocol` and `fake_queue.precise_loop`: what worker processes import (N of them
  start per rep);
- `fake_queue.options` (the server's flags, their help, `ServeOptions`) and
  `fake_queue.queue.scalers` (`SCALERS`): what jobbench's CLI reads on every start, before it
  knows which command runs.

Here: the queue in-process on an injected clock (`JobQueue`, the virtual-time loop), its event
log, its latency, fault and fleet models, and the server itself (`serve`, which imports the HTTP
face only when called: importing this module loads no aiohttp). Everything else of fake_queue
is internal and may change with it. `scripts/check_imports.py` and an import-linter contract
(pyproject.toml) hold jobbench and benchmarks/ to this surface.
"""

from __future__ import annotations

from fake_queue.options import ServeOptions
from fake_queue.queue import virtual_clock
from fake_queue.queue.autoscaled_fleet import (
    FLEET_EVENTS,
    Fleet,
    FleetSettings,
    FleetSettingsError,
    Order,
    worker_index,
)
from fake_queue.queue.event_log import CompactEvents, LogHead
from fake_queue.queue.faults import FaultSpecError, parse_fault
from fake_queue.queue.job_queue import JobError, JobQueue
from fake_queue.queue.jobs import Event
from fake_queue.queue.latency import (
    TAKE_EXTRA,
    Distribution,
    LatencyModel,
    LatencySampler,
    LatencySpecError,
    parse_distribution,
)

__all__ = [
    "FLEET_EVENTS",
    "TAKE_EXTRA",
    "CompactEvents",
    "Distribution",
    "Event",
    "FaultSpecError",
    "Fleet",
    "FleetSettings",
    "FleetSettingsError",
    "JobError",
    "JobQueue",
    "LatencyModel",
    "LatencySampler",
    "LatencySpecError",
    "LogHead",
    "Order",
    "parse_distribution",
    "parse_fault",
    "serve",
    "virtual_clock",
    "worker_index",
]

# The surface's modules imported directly, each on the standard library alone (above); the
# checks read them here (scripts/check_imports.py).
STDLIB_ONLY_MODULES = (
    "fake_queue.options",
    "fake_queue.precise_loop",
    "fake_queue.protocol",
    "fake_queue.queue.scalers",
)


def serve(options: ServeOptions) -> int:
    """`python -m fake_queue` in this process (fake_queue/command.py): serve until a signal; 0
    then, 2 with a one-line error if it cannot start."""
    # The HTTP face (aiohttp, the server) is imported here, by the one caller that serves, so
    # that the simulator and the scenario's configs never load it.
    from fake_queue.command import serve as serve_until_signal

    return serve_until_signal(options)
