"""`jobbench locust`'s request: Locust's flags, checked as they are read (Locust itself would
refuse them only once it runs, with an exit code of its own), and the embedded queue's fleet or
the live endpoint, made from theirs as the request is made: before Locust, the queue or a
worker starts."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jobbench.commands.requests.flag import argument, decimal, flag, option, path, whole
from jobbench.commands.requests.shared import (
    DONE_LATENCY,
    HOLD,
    INPUT_JSON,
    INPUTS,
    JOB_SECONDS,
    POLICY,
    PYTHON,
    SDK,
    SEED,
    TAKE_LATENCY,
    WAKE_LATENCY,
    WORKER,
    read_fail_ratio,
)
from jobbench.core.scenario.checks import PAYLOAD_BYTES, check_count, check_positive_int
from jobbench.errors import UsageError

if TYPE_CHECKING:
    from fake_queue.api import LatencyModel
    from jobbench.clients.endpoint import Endpoint
    from jobbench.core.scenario.config import Scenario
    from jobbench.workers.spec import WorkerSpec

RUN_TIME = re.compile(r"\d+|(?=\d)(\d+h)?(\d+m)?(\d+s)?")  # Locust's: 20, 20s, 3m, 1h20m


def read_users(text: str) -> int:
    users = whole(10)(text)
    check_positive_int("--users", users)
    return users


def read_spawn_rate(text: str) -> float:
    rate = decimal(10.0)(text)
    if not (math.isfinite(rate) and rate > 0):
        raise UsageError(f"--spawn-rate {rate}: use users started per second > 0")
    return rate


def read_run_time(text: str) -> str:
    if not RUN_TIME.fullmatch(text):
        raise UsageError(f"--run-time {text!r}: write e.g. 30s, 5m or 1h30m")
    return text


def read_port(text: str) -> int:
    port = whole(8089)(text)
    if not 1 <= port <= 65535:
        raise UsageError(f"--web-port {port}: use a port from 1 to 65535, e.g. 8089")
    return port


def read_processes(text: str) -> int:
    processes = whole(4)(text)
    if processes != -1 and processes < 1:
        raise UsageError(f"--processes {processes}: use 1 or more, or -1 (one per CPU)")
    return processes


def read_payload_bytes(text: str) -> int:
    size = whole(1024)(text)
    check_count(PAYLOAD_BYTES, size)
    return size


# The fake queue's fleet: no -t, which is --run-time, as in Locust.
WORKERS = option(
    "--workers", "-w", metavar="N", read=whole(4), help="fake queue: worker processes", default=4
)
SLOTS = option(
    "--slots",
    "-s",
    metavar="N",
    read=whole(32),
    help="fake queue: concurrent jobs per worker (32; a command must say)",
    default=None,
)
TAKE_AHEAD = option(
    "--take-ahead",
    metavar="K",
    read=whole(32),
    help="fake queue: take-ahead (0: off)",
    default=0,
)


@dataclass(frozen=True)
class LocustRequest:
    """`jobbench locust`'s flags, in the order its help lists them; `target` and `scenario` are
    made from them."""

    extra: tuple[str, ...] = argument(  # passed on to Locust as they are
        "LOCUST_ARGS", "passed to Locust as is (after --)", default=(), repeat=True
    )()
    endpoint: str | None = flag(
        None, "--endpoint", metavar="URL|ID", help="live endpoint URL or id (default: fake)"
    )
    api_key: str | None = flag(
        None, "--api-key", metavar="KEY", help="key of --endpoint (else RUNPOD_API_KEY)"
    )
    headless: bool = flag(False, "--headless", help="no web UI: start at once")
    # -u, -r, -t: Locust's own short flags for these
    users: int = flag(
        10, "--users", "-u", metavar="N", read=read_users, help="concurrent Locust users"
    )
    spawn_rate: float = flag(
        10.0,
        "--spawn-rate",
        "-r",
        metavar="RATE",
        read=read_spawn_rate,
        help="users started per second",
    )
    run_time: str | None = flag(
        None,
        "--run-time",
        "-t",
        metavar="DURATION",
        read=read_run_time,
        help="stop after e.g. 30s, 5m",
    )
    json_file: Path | None = flag(
        None, "--json-file", metavar="FILE", read=path, help="Locust's final stats as JSON"
    )
    csv: str | None = flag(None, "--csv", metavar="PREFIX", help="Locust's CSV files prefix")
    html: Path | None = flag(None, "--html", metavar="FILE", read=path, help="Locust's HTML report")
    web_host: str = flag("127.0.0.1", "--web-host", metavar="ADDR", help="web UI address")
    web_port: int = flag(8089, "--web-port", metavar="PORT", read=read_port, help="web UI port")
    master: bool = flag(False, "--master", help="Locust master node")
    locust_worker: bool = flag(
        False, "--locust-worker", help="Locust worker node (Locust's --worker)"
    )
    processes: int | None = flag(
        None,
        "--processes",
        metavar="N",
        read=read_processes,
        help="Locust processes on this machine",
    )
    max_fail_ratio: float = flag(
        0.01,
        "--max-fail-ratio",
        metavar="RATIO",
        read=read_fail_ratio,
        help="JOB failure ratio that exits 4",
    )
    job_seconds: float = JOB_SECONDS()
    payload_bytes: int = flag(
        0,
        "--payload-bytes",
        metavar="BYTES",
        read=read_payload_bytes,
        help="result bytes per bench job",
    )
    input_json: str | None = INPUT_JSON()
    inputs_file: Path | None = INPUTS()
    workers: int = WORKERS()
    slots: int | None = SLOTS()
    take_ahead: int = TAKE_AHEAD()
    worker: str = WORKER()
    policy: str | None = POLICY()
    sdk: Path | None = SDK()
    python: str | None = PYTHON()
    take_latency: str = TAKE_LATENCY()
    wake_latency: str = WAKE_LATENCY()
    hold: str = HOLD()
    done_latency: str = DONE_LATENCY()
    seed: int | None = SEED()
    target: Endpoint | None = field(init=False)  # None: the embedded fake queue, `scenario`'s
    scenario: Scenario = field(init=False)

    def __post_init__(self) -> None:
        """The worker, the inputs, the endpoint and the fleet, each checked, in that order."""
        from jobbench.clients.endpoint import live_endpoint
        from jobbench.core.scenario.config import LatencyFlags, read_inputs
        from jobbench.core.scenario.worker import worker_spec

        latency = LatencyFlags(self.take_latency, self.wake_latency, self.hold, self.done_latency)
        spec = worker_spec(self.worker, self.policy, self.take_ahead, self.sdk, self.python)
        read_inputs(self.input_json, self.inputs_file)  # a usage error now, not a Locust crash
        target = live_endpoint(self.endpoint, self.api_key) if self.endpoint else None
        object.__setattr__(self, "target", target)
        scenario = fleet_scenario(self.workers, self.slots, self.job_seconds, spec, latency.model())
        object.__setattr__(self, "scenario", scenario)

    @property
    def is_locust_worker(self) -> bool:
        """A Locust worker node gets its host and users from the master: no queue here."""
        return self.locust_worker or "--worker" in self.extra


def fleet_scenario(
    workers: int, slots: int | None, job_seconds: float, spec: WorkerSpec, latency: LatencyModel
) -> Scenario:
    """The embedded queue's workers and latency model, built and checked as `run`'s are (Locust
    submits the jobs: the scenario's burst is one)."""
    from jobbench.core.scenario.build import build_scenario
    from jobbench.core.scenario.config import check_fits

    scenario = build_scenario(
        workers=workers,
        slots=slots,
        burst=1,
        job_seconds=job_seconds,
        worker=spec,
        latency=latency,
    )
    return check_fits(scenario)
