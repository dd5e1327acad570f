"""Process-group teardown and cleanup ordering, in process, with real child processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from fake_queue.http.server import RunningServer
from jobbench.clients.bench_client import BenchClient
from jobbench.commands.locust import LocustRequest, locust_env
from jobbench.commands.workers import WorkersRequest, workers_command
from jobbench.core.real_workers.fake_target import FakeSession
from jobbench.core.run.loop import stop_sessions
from jobbench.core.scenario.config import Scenario
from jobbench.core.scenario.worker import worker_spec
from jobbench.errors import WorkerError
from jobbench.procs import spawn
from jobbench.procs.embedded_queue import EmbeddedQueue, start_embedded_queue
from jobbench.procs.groups import group_alive
from jobbench.procs.signals import interrupts_deferred, sigterm_as_interrupt
from jobbench.procs.spawn import STOP_GRACE_S, WorkerProcess, stop_group
from jobbench.render.text.plain_progress import PlainProgress

# The leader exits on SIGTERM; the child it forked ignores SIGTERM (set before the fork).
LEADER_AND_STUBBORN_CHILD = """trap '' TERM; sleep 60 & trap - TERM; echo ready; wait"""


def group_with_stubborn_child() -> subprocess.Popen[str]:
    process = subprocess.Popen(
        ["sh", "-c", LEADER_AND_STUBBORN_CHILD],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


def test_stop_group_leaves_no_member_even_one_that_ignores_sigterm() -> None:
    process = group_with_stubborn_child()
    try:
        stop_group(process, grace_s=1.0)
        assert process.returncode == -signal.SIGTERM and not group_alive(process.pid)
    finally:
        kill_group(process.pid)


def test_embedded_queue_stop_leaves_no_member_of_its_group() -> None:
    process = group_with_stubborn_child()
    try:
        EmbeddedQueue("", "", process).stop()
        assert not group_alive(process.pid)
    finally:
        kill_group(process.pid)


def test_an_embedded_queue_takes_a_key_that_begins_with_a_dash(tmp_path: Path) -> None:
    """A run's own key comes from secrets.token_urlsafe, whose alphabet holds "-": one in 64
    begins with it, and must not read as a flag of the queue's command line."""
    key = "-k3y_made-by-token-urlsafe"
    queue = start_embedded_queue(tmp_path / "queue.log", api_key=key)
    try:
        with contextlib.closing(BenchClient(queue.base_url, key)) as client:
            assert client.workers() == {}
    finally:
        queue.stop()


@pytest.mark.parametrize(
    "failure", [WorkerError("w1", None, "", "did not start"), KeyboardInterrupt()]
)
def test_workers_stops_the_workers_started_before_one_failed_to_start(
    failure: BaseException, server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[WorkerProcess] = []
    real_start = WorkerProcess.start

    def start(worker: WorkerProcess) -> None:
        if worker.worker_id.endswith("-w1"):  # the second of three: one is already running
            raise failure
        real_start(worker)
        started.append(worker)

    monkeypatch.setattr(WorkerProcess, "start", start)
    spec = worker_spec("sleep 60", None, 0, None, None)
    request = WorkersRequest(server.base_url, 3, 1, spec, name="partway")
    try:
        with pytest.raises(type(failure)) as caught:  # Ctrl-C is raised on: exit 130
            workers_command(request)
        assert [w.worker_id for w in started] == ["partway-w0"]
        if isinstance(failure, WorkerError):  # a failure keeps the logs and says where
            kept = Path(str(caught.value).rsplit("logs kept in ", 1)[1])
            assert kept.is_dir() and (kept / "partway-w0.log").exists()
            shutil.rmtree(kept)
        assert not group_alive(started[0].pgid or 0)
    finally:
        for worker in started:
            kill_group(worker.pgid or 0)


def test_stop_sessions_stops_every_session_then_raises_a_ctrl_c_that_came_meanwhile(
    tmp_path: Path,
) -> None:
    stopped: list[str] = []

    class Session(FakeSession):
        def stop(self) -> None:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C while the first session stops
            stopped.append(self.label)

    sessions: list[Session] = [
        Session(Scenario("s"), tmp_path, PlainProgress(quiet=True), label=label) for label in "AB"
    ]
    with pytest.raises(KeyboardInterrupt):
        stop_sessions(sessions)
    assert stopped == ["A", "B"]


def test_deferred_sigterm_becomes_the_interrupt_after_the_block_or_is_dropped() -> None:
    finished: list[bool] = []
    with sigterm_as_interrupt():
        with pytest.raises(KeyboardInterrupt), interrupts_deferred():
            signal.raise_signal(signal.SIGTERM)  # a second SIGTERM while cleaning up
            finished.append(True)
        with interrupts_deferred(redeliver=False):  # a caller that is ending anyway
            signal.raise_signal(signal.SIGTERM)
    assert finished == [True]


@pytest.mark.parametrize(
    ("endpoint", "locust_worker", "sent"),
    [
        (None, False, None),  # the embedded fake queue: never the user's real key
        ("https://api.runpod.ai/v2/x", False, "live-key"),
        (None, True, "real-key"),  # a Locust worker node: its master may be on a live endpoint
    ],
)
def test_locust_sends_the_runpod_key_only_where_it_may_be_live(
    endpoint: str | None,
    locust_worker: bool,
    sent: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", "real-key")
    monkeypatch.delenv("JOBBENCH_API_KEY", raising=False)
    key = "live-key" if endpoint else None
    request = LocustRequest(endpoint=endpoint, api_key=key, locust_worker=locust_worker)
    env = locust_env(request)
    bearer = env.get("JOBBENCH_API_KEY") or env.get("RUNPOD_API_KEY")  # the locustfile's order
    assert bearer == sent


# A starter of a group as jobbench starts one: it says the group's id, its guard's pid and the
# pid of a child it forked (as the sweep's pool forks: it must not keep the guard waiting), then
# stops the group itself and exits, or waits to be killed.
STARTER = """
import os, subprocess, sys, time
from jobbench.procs.spawn import GUARD, popen_own_group, stop_group
group = popen_own_group(["sh", "-c", sys.argv[1]], stdout=subprocess.PIPE, text=True)
assert group.stdout.readline() == "ready\\n"
forked = os.fork()
if forked == 0:
    time.sleep(60)
    os._exit(0)
print(group.pid, GUARD.pid, forked, flush=True)
if sys.argv[2] == "stops-it":
    stop_group(group, grace_s=1.0)
else:
    time.sleep(60)
"""


def start_starter(how: str) -> tuple[subprocess.Popen[str], int, int, int]:
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, LEADER_AND_STUBBORN_CHILD, how],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert starter.stdout is not None
    pgid, guard, forked = map(int, starter.stdout.readline().split())
    return starter, pgid, guard, forked


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_until(done: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)
    return done()


def test_the_guard_stops_the_groups_of_a_sigkilled_starter_even_a_stubborn_member() -> None:
    """`kill -9` of jobbench, the OOM killer, a runner's hard timeout: no stop runs in it, and
    its children lead sessions of their own, so only the guard can stop them."""
    starter, pgid, guard, forked = start_starter("waits")
    try:
        assert group_alive(pgid) and not gone(guard)
        starter.kill()
        starter.wait()
        # SIGTERM ends the leader, not the child that ignores it: the grace, then SIGKILL. The
        # starter's forked child still runs and must not hold the guard's pipe open.
        assert wait_until(lambda: not group_alive(pgid), STOP_GRACE_S + 10)
        assert wait_until(lambda: gone(guard), 5) and not gone(forked)
    finally:
        kill_group(pgid)
        for pid in (guard, forked):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_the_guard_of_a_starter_that_stopped_its_group_ends_with_it() -> None:
    starter, pgid, guard, forked = start_starter("stops-it")
    try:
        assert starter.wait(STOP_GRACE_S + 10) == 0 and not group_alive(pgid)
        assert wait_until(lambda: gone(guard), 5)
    finally:
        kill_group(pgid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(forked, signal.SIGKILL)


def test_a_group_whose_guard_failed_to_start_is_stopped_not_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The caller never sees a group whose guard could not be told of it, so none may run."""
    started: list[int] = []
    real_popen = subprocess.Popen

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[Any]:
        process = real_popen(*args, **kwargs)
        started.append(process.pid)
        return process

    def no_guard(pgid: int) -> None:
        raise OSError("no process for the guard")

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(spawn.GUARD, "watch", no_guard)
    try:
        with pytest.raises(OSError, match="no process for the guard"):
            spawn.popen_own_group(["sh", "-c", LEADER_AND_STUBBORN_CHILD], stdout=subprocess.PIPE)
        assert len(started) == 1 and not group_alive(started[0])
    finally:
        for pgid in started:
            kill_group(pgid)


def kill_group(pgid: int) -> None:
    if pgid and group_alive(pgid):
        os.killpg(pgid, signal.SIGKILL)
