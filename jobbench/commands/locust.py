"""`jobbench locust`: Locust (web UI or headless) driving jobs through the embedded fake queue with
workers, or a live endpoint. Locust runs as a subprocess, so its gevent monkey-patching never
touches this process; this module does not import locust.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fake_queue.latency import LatencyModel
from jobbench.clients.endpoint import LiveTarget
from jobbench.clients.locust_stats import job_stats, read_stats
from jobbench.core.config import Scenario, scenario_name, validate_scenario
from jobbench.core.fake_target import ScenarioSession, make_workdir
from jobbench.errors import EXIT_OK, EXIT_RUN_FAILED, RunFailed, UsageError
from jobbench.procs.signals import sigterm_as_interrupt
from jobbench.procs.spawn import signal_group, stop_group
from jobbench.render.plain_progress import PlainProgress
from jobbench.workers.spec import WorkerSpec

LOCUSTFILE = Path(__file__).parents[1] / "clients" / "locustfile.py"  # Locust runs it
POLL_S = 0.25
SHUTDOWN_GRACE_S = 20.0  # Locust writes its reports on the way out
STOP_GRACE_S = 5.0


@dataclass(frozen=True)
class LocustRequest:
    target: LiveTarget | None  # None: the embedded fake queue with `scenario`'s workers
    scenario: Scenario
    headless: bool = False
    users: int = 10
    spawn_rate: float = 10.0
    run_time: str | None = None
    json_file: Path | None = None
    csv: str | None = None
    html: Path | None = None
    web_host: str = "127.0.0.1"
    web_port: int = 8089
    master: bool = False
    locust_worker: bool = False
    processes: int | None = None
    max_fail_ratio: float = 0.01
    payload_bytes: int = 0
    inputs_file: Path | None = None
    input_json: str | None = None
    seed: int | None = None
    extra: tuple[str, ...] = ()

    @property
    def is_locust_worker(self) -> bool:
        """A Locust worker node gets its host and users from the master: no queue here."""
        return self.locust_worker or "--worker" in self.extra


def locust_argv(req: LocustRequest, host: str | None, json_base: Path) -> list[str]:
    argv = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE)]
    if req.is_locust_worker:
        return argv + (["--worker"] if req.locust_worker else []) + _distributed(req) + [*req.extra]
    assert host is not None
    argv += ["--host", host, "--users", str(req.users), "--spawn-rate", f"{req.spawn_rate:g}"]
    argv += ["--json-file", str(json_base)]  # Locust adds the .json
    if req.headless:
        argv.append("--headless")
    else:
        argv += ["--web-host", req.web_host, "--web-port", str(req.web_port)]
    if req.run_time:
        argv += ["--run-time", req.run_time] + ([] if req.headless else ["--autostart"])
    if req.csv:
        argv += ["--csv", req.csv]
    if req.html:
        argv += ["--html", str(req.html)]
    if req.master:
        argv.append("--master")
    return argv + _distributed(req) + list(req.extra)


def _distributed(req: LocustRequest) -> list[str]:
    return ["--processes", str(req.processes)] if req.processes else []


def locust_env(req: LocustRequest) -> dict[str, str]:
    env = dict(os.environ)
    if req.target is None and not req.is_locust_worker:
        # The locustfile falls back to RUNPOD_API_KEY: never send a real key to the fake queue.
        env.pop("RUNPOD_API_KEY", None)
    if req.target is not None and req.target.api_key:
        env["JOBBENCH_API_KEY"] = req.target.api_key  # by env: never on a command line
    env["JOBBENCH_JOB_SECONDS"] = f"{req.scenario.job_seconds:g}"
    if req.payload_bytes:
        env["JOBBENCH_PAYLOAD_BYTES"] = str(req.payload_bytes)
    if req.inputs_file is not None:
        env["JOBBENCH_INPUTS"] = str(req.inputs_file.resolve())
    if req.input_json is not None:
        env["JOBBENCH_INPUT"] = req.input_json
    return env


def json_paths(req: LocustRequest, tmp: Path) -> tuple[Path, Path]:
    """(what Locust is told, what it writes): `--json-file X` makes Locust write X.json."""
    if req.json_file is None:
        return tmp / "locust", tmp / "locust.json"
    written = req.json_file if req.json_file.suffix == ".json" else Path(f"{req.json_file}.json")
    return written.with_suffix(""), written


def locust_command(req: LocustRequest) -> int:
    if not 0.0 <= req.max_fail_ratio <= 1.0:
        raise UsageError(f"--max-fail-ratio {req.max_fail_ratio}: use a fraction like 0.01")
    session: ScenarioSession | None = None
    with sigterm_as_interrupt(), tempfile.TemporaryDirectory(prefix="jobbench-locust-") as tmp:
        json_base, json_written = json_paths(req, Path(tmp))
        json_written.unlink(missing_ok=True)  # never judge a previous run's stats
        try:
            host = None
            if req.target is not None:
                host = req.target.url
            elif not req.is_locust_worker:
                session = _start_queue(req)
                host = session.endpoint_url
            code = run_locust(locust_argv(req, host, json_base), locust_env(req), session)
        finally:
            if session is not None:
                session.stop()
        if req.is_locust_worker:  # its stats live on the master
            return EXIT_OK if code in (0, 1) else EXIT_RUN_FAILED
        return judge(json_written, req.max_fail_ratio, code)


def _start_queue(req: LocustRequest) -> ScenarioSession:
    session = ScenarioSession(
        req.scenario, make_workdir(), PlainProgress(quiet=True), seed=req.seed
    )
    try:
        session.start()
    except BaseException:
        session.stop()
        raise
    print(
        f"fake queue {session.endpoint_url}: {req.scenario.workers} x "
        f"{req.scenario.worker.describe()} x {req.scenario.slots} slots",
        file=sys.stderr,
        flush=True,
    )
    return session


def run_locust(argv: list[str], env: dict[str, str], session: ScenarioSession | None) -> int:
    """Run Locust in its own process group until it exits; Ctrl-C is passed on to it (it then
    writes its reports), and nothing of it outlives this call."""
    # stdin is not a terminal for Locust: its keyboard poller would stop a background group.
    process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        while True:
            try:
                return process.wait(POLL_S)
            except subprocess.TimeoutExpired:
                pass
            if session is not None:
                session.check_workers()  # a dead worker ends the run (exit 4), never silently
    except KeyboardInterrupt:
        signal_group(process.pid, signal.SIGINT)
        try:
            return process.wait(SHUTDOWN_GRACE_S)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            return -1
    finally:
        stop_group(process, STOP_GRACE_S)  # what is left of it, e.g. --processes children


def judge(json_file: Path, max_fail_ratio: float, locust_code: int) -> int:
    """Exit 4 when the JOB failure ratio is over the limit (Locust's own exit code is 1 on any
    failed request, 429s included, so it is not used)."""
    if locust_code not in (0, 1) and not json_file.exists():
        raise RunFailed(f"Locust exited with code {locust_code}; see its output above")
    stats = job_stats(read_stats(json_file))
    print(f"JOB: {stats.describe()}", file=sys.stderr, flush=True)
    if stats.jobs and stats.fail_ratio > max_fail_ratio:
        raise RunFailed(
            f"job failure ratio {stats.fail_ratio:.2%} is over --max-fail-ratio "
            f"{max_fail_ratio:g} ({stats.failures} of {stats.jobs} jobs failed)"
        )
    return EXIT_OK


def fleet_scenario(
    workers: int, slots: int, job_seconds: float, spec: WorkerSpec, latency: LatencyModel
) -> Scenario:
    """The embedded queue's workers and latency model, checked as `run` checks them."""
    return validate_scenario(
        Scenario(
            name=scenario_name(workers, 1, job_seconds),
            workers=workers,
            slots=slots,
            burst=1,
            job_seconds=job_seconds,
            worker=spec,
            latency=latency,
        )
    )
