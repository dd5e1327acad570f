"""`jobbench locust`: Locust (web UI or headless) driving jobs through the embedded fake queue with
workers, or a live endpoint. Locust runs as a subprocess, so its gevent monkey-patching never
touches this process; this module does not import locust.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from jobbench.clients.locust_stats import JobStats, job_stats, read_stats
from jobbench.commands.requests.locust import LocustRequest
from jobbench.core.real_workers.fake_target import FakeSession, make_workdir
from jobbench.errors import EXIT_OK, EXIT_RUN_FAILED, RunFailed, UsageError, name_kept_logs
from jobbench.procs.groups import signal_group
from jobbench.procs.signals import interrupts_deferred, sigterm_as_interrupt
from jobbench.procs.spawn import popen_own_group, stop_group
from jobbench.render.text.plain_progress import PlainProgress

LOCUSTFILE = Path(__file__).parents[1] / "clients" / "locustfile.py"  # Locust runs it
POLL_S = 0.25
SHUTDOWN_GRACE_S = 20.0  # Locust writes its reports on the way out
STOP_GRACE_S = 5.0


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


def require_locust() -> None:
    """Locust is an extra (it brings flask, gevent and pyzmq): say which, before anything starts.
    `python -m locust` runs with this interpreter and environment, so finding it here is enough."""
    if importlib.util.find_spec("locust") is None:
        raise UsageError("jobbench locust needs Locust: pip install 'jobbench[locust]'")


def locust_command(req: LocustRequest) -> int:
    """Locust's run judged by its JOB rows; Ctrl-C or SIGTERM is passed on to Locust, which
    writes its reports, then everything is stopped and the interrupt raised (exit 130)."""
    require_locust()
    with sigterm_as_interrupt(), tempfile.TemporaryDirectory(prefix="jobbench-locust-") as tmp:
        json_base, json_written = json_paths(req, Path(tmp))
        json_written.unlink(missing_ok=True)  # never judge a previous run's stats
        try:
            code = _run_on_target(req, json_base)
        except KeyboardInterrupt:
            if json_written.exists() and not req.is_locust_worker:
                # Ending anyway: say what it saw, if its stats read; the exit stays 130.
                with interrupts_deferred(redeliver=False), contextlib.suppress(RunFailed):
                    say_job_stats(json_written)
            raise
        if req.is_locust_worker:  # its stats live on the master
            return EXIT_OK if code in (0, 1) else EXIT_RUN_FAILED
        return judge(json_written, req.max_fail_ratio, code)


def _run_on_target(req: LocustRequest, json_base: Path) -> int:
    """Locust's exit code, with the embedded queue and its workers (unless the target is live or
    this is a Locust worker node) up while it runs and stopped after, however it ends."""
    session: FakeSession | None = None
    try:
        host = None
        if req.target is not None:
            host = req.target.url
        elif not req.is_locust_worker:
            session = _start_queue(req)
            host = session.endpoint_url
        return run_locust(locust_argv(req, host, json_base), locust_env(req), session)
    except RunFailed as exc:  # a worker died: its logs stay, and the error says where
        if session is not None:
            session.keep_logs()
            name_kept_logs(exc, [str(session.logs_folder)])
        raise
    finally:
        if session is not None:
            session.stop()


def _start_queue(req: LocustRequest) -> FakeSession:
    session = FakeSession(req.scenario, make_workdir(), PlainProgress(quiet=True), seed=req.seed)
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


def run_locust(argv: list[str], env: dict[str, str], session: FakeSession | None) -> int:
    """Run Locust in its own process group until it exits; nothing of it outlives this call.
    Ctrl-C is passed on to it (it then writes its reports) and raised once it has exited."""
    # stdin is not a terminal for Locust: its keyboard poller would stop a background group.
    process = popen_own_group(argv, env=env, stdin=subprocess.DEVNULL)
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
        print(
            f"interrupted: Locust is writing its reports (up to {SHUTDOWN_GRACE_S:g} s); "
            "Ctrl-C again to stop it now",
            file=sys.stderr,
            flush=True,
        )
        with contextlib.suppress(subprocess.TimeoutExpired, KeyboardInterrupt):
            process.wait(SHUTDOWN_GRACE_S)  # a second Ctrl-C: stop waiting for its reports
        raise
    finally:
        stop_group(process, STOP_GRACE_S)  # what is left of it, e.g. --processes children


def judge(json_file: Path, max_fail_ratio: float, locust_code: int) -> int:
    """Exit 4 when the JOB failure ratio is over the limit (Locust's own exit code is 1 on any
    failed request, 429s included, so it is not used)."""
    if locust_code not in (0, 1) and not json_file.exists():
        raise RunFailed(f"Locust exited with code {locust_code}; see its output above")
    stats = say_job_stats(json_file)
    if stats.jobs and stats.fail_ratio > max_fail_ratio:
        raise RunFailed(
            f"job failure ratio {stats.fail_ratio:.2%} is over --max-fail-ratio "
            f"{max_fail_ratio:g} ({stats.failures} of {stats.jobs} jobs failed)"
        )
    return EXIT_OK


def say_job_stats(json_file: Path) -> JobStats:
    stats = job_stats(read_stats(json_file))
    print(f"JOB: {stats.describe()}", file=sys.stderr, flush=True)
    return stats
