"""The policy-model worker (python -m jobbench.workers.policy_worker) against the fake queue.

Real worker processes, the server at 1/10 scale (take 50 ms, wake 5 ms, hold 2 s), 8 slots.
What each policy does is checked from the server's event log: take sizes, exactly-once, and
the order of takes, deliveries and results (a take after its batch drained, one buffer at a
time, a 1 s re-check). No test asserts how long anything took: how close the policies come to
the analytic model of docs/latency-model.md is measured by benchmarks/reference_table.py
(docs/performance.md), and reproduced exactly on virtual time by tests/unit/test_virtual_time.py.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest

from fake_queue.http.server import RunningServer, worker_env
from fake_queue.queue import virtual_clock
from jobbench.workers.bench_handler import bench_handler
from jobbench.workers.policy_base import Job, Policy, post_each
from jobbench.workers.policy_drain import DrainPolicy, TakeAheadPolicy
from jobbench.workers.policy_sdk112 import Sdk112Policy
from tests.task_runs import HandlerTasks

pytestmark = pytest.mark.e2e

WORKER = [sys.executable, "-m", "jobbench.workers.policy_worker"]
TAKE, WAKE, SLOTS = 0.05, 0.005, 8
# The queue logs `deliver` as a take's answer leaves; a stop signal before the worker has read
# it cancels that take with its jobs unseen (they stay in progress at the queue). A moment to
# read it, well inside the tests' 0.5 s jobs (a CI run lost the held jobs this way).
ANSWER_READ_S = 0.1
Event = dict[str, Any]


# -- helpers ----------------------------------------------------------------------------------
def kill_group(proc: subprocess.Popen[bytes]) -> None:
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(5)


def launch(
    server: RunningServer, tmp_path: Path, worker_id: str, **env: str
) -> subprocess.Popen[bytes]:
    full = {
        **os.environ,
        **worker_env(server.endpoint_url, worker_id),
        "RUNPOD_POD_ID": worker_id,
        **env,
    }
    with (tmp_path / f"{worker_id}.log").open("wb") as log:  # the child keeps its own copy
        return subprocess.Popen(
            WORKER, env=full, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )


def log_tail(tmp_path: Path, worker_id: str) -> str:
    return (tmp_path / f"{worker_id}.log").read_text()[-2000:]


@contextmanager
def worker(
    http: httpx.Client, server: RunningServer, tmp_path: Path, worker_id: str = "w1", **env: str
) -> Iterator[subprocess.Popen[bytes]]:
    """A worker process that is long-polling a take; its process group dies afterwards."""
    proc = launch(server, tmp_path, worker_id, **env)
    try:
        deadline = time.monotonic() + 15
        while http.get("/_bench/workers").json().get(worker_id, {}).get("polling", 0) < 1:
            assert proc.poll() is None, f"worker exited {proc.returncode}: " + log_tail(
                tmp_path, worker_id
            )
            assert time.monotonic() < deadline, "worker never polled: " + log_tail(
                tmp_path, worker_id
            )
            time.sleep(0.02)
        yield proc
    finally:
        kill_group(proc)


def wait_for(what: str, ready: Callable[[], bool], timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def events(http: httpx.Client) -> list[Event]:
    found: list[Event] = http.get("/_bench/events", params={"cursor": 0}).json()["events"]
    return found


def burst(http: httpx.Client, count: int, seconds: float) -> list[Event]:
    """Enqueue atomically, wait until every job is terminal, return the event log."""
    http.post("/_bench/burst", json={"count": count, "input": {"seconds": seconds}})

    def finished() -> bool:
        counts: dict[str, int] = http.get("/_bench/state").json()["counts"]
        return counts["in_queue"] == 0 and counts["in_progress"] == 0

    wait_for(f"a burst of {count}", finished, 30)
    return events(http)


def of(log: list[Event], kind: str) -> list[Event]:
    return [e for e in log if e["ev"] == kind]


def full_takes(log: list[Event]) -> list[Event]:
    return sorted((e for e in of(log, "take") if e["got"] > 0), key=lambda e: e["arrived"])


def done_by_take(log: list[Event]) -> dict[int, list[int]]:
    """Done timestamps of each take's jobs."""
    take_of = {e["job"]: e["take"] for e in of(log, "deliver")}
    result: dict[int, list[int]] = {}
    for e in of(log, "done"):
        result.setdefault(take_of[e["job"]], []).append(e["t"])
    return result


def assert_each_job_completed_once(log: list[Event], count: int) -> None:
    submitted = {e["job"] for e in of(log, "submit")}
    assert len(submitted) == count
    for kind in ("deliver", "done"):
        per_job = Counter(e["job"] for e in of(log, kind))
        assert set(per_job) == submitted and set(per_job.values()) == {1}, kind
    assert {e["status"] for e in of(log, "done")} == {"COMPLETED"}
    assert not of(log, "requeue") and not of(log, "ignored")


# -- policies against the model ---------------------------------------------------------------
def test_drain_takes_a_full_batch_once_drained_cycle_take_plus_job(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=2.0, api_key="k3y")
    with httpx.Client(base_url=server.base_url, headers={"Authorization": "Bearer k3y"}) as http:
        env = {"JOBBENCH_POLICY": "drain", "JOBBENCH_SLOTS": str(SLOTS), "RUNPOD_AI_API_KEY": "k3y"}
        with worker(http, server, tmp_path, **env):
            log = burst(http, 64, 0.05)
    assert_each_job_completed_once(log, 64)
    takes = full_takes(log)
    assert [(t["asked"], t["got"]) for t in takes] == [(SLOTS, SLOTS)] * 8
    done = done_by_take(log)
    for before, take in pairwise(takes):
        last_done = max(done[before["take"]])
        # only once every slot drained (its jobs ran their 0.05 s; results post in the
        # background, racing the take, so it may reach the queue just before them) ...
        assert take["arrived"] >= before["t"] + 0.05e9
        # ... and at once, not after a re-check tick as sdk-1.12 waits (its 1 s)
        assert take["arrived"] < last_done + 1e9
        assert not take["in_progress"]


def test_take_ahead_holds_one_buffer_taken_while_slots_run(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=2.0)
    env = {
        "JOBBENCH_POLICY": "take-ahead",
        "JOBBENCH_SLOTS": str(SLOTS),
        "JOBBENCH_TAKE_AHEAD": "8",
    }
    with httpx.Client(base_url=server.base_url) as http, worker(http, server, tmp_path, **env):
        log = burst(http, 64, 0.05)
    assert_each_job_completed_once(log, 64)
    takes = full_takes(log)
    assert (takes[0]["asked"], takes[0]["got"]) == (SLOTS, SLOTS)
    delivered = {e["job"]: e["t"] for e in of(log, "deliver")}
    finished = {e["job"]: e["t"] for e in of(log, "done")}
    done = done_by_take(log)
    for i, take in enumerate(takes[1:], start=1):
        assert take["asked"] == 8 and take["got"] <= 8 and take["in_progress"]
        running = [j for j in delivered if delivered[j] <= take["arrived"] < finished[j]]
        assert running, f"take-ahead {i} arrived while no job ran"
        if i >= 2:  # one buffer at a time: asked for only once the last buffer moved in
            # (the buffer moves in when handlers return; their results post in the background,
            # racing the take, so allow 10 ms: taking early would be a whole job, 50 ms, early)
            assert take["arrived"] >= max(done[takes[i - 2]["take"]]) - 0.01e9


def test_sdk_1_12_rechecks_every_second_when_full(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=2.0)
    env = {"JOBBENCH_POLICY": "sdk-1.12", "JOBBENCH_SLOTS": str(SLOTS)}
    with httpx.Client(base_url=server.base_url) as http, worker(http, server, tmp_path, **env):
        log = burst(http, 24, 0.05)
    assert_each_job_completed_once(log, 24)
    takes = full_takes(log)
    assert [(t["asked"], t["got"]) for t in takes] == [(SLOTS, SLOTS)] * 3
    for before, take in pairwise(takes):
        assert take["arrived"] - before["t"] >= 0.999e9  # sleep(1) after a take filled it
        assert not take["in_progress"]
    # every batch ran to its results before the next take went out (the re-check found it full)
    done = done_by_take(log)
    for before, take in pairwise(takes):
        assert max(done[before["take"]]) <= take["arrived"]


def test_sdk_take_ahead_holds_one_buffer_on_the_sdk_loops(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=2.0)
    env = {"JOBBENCH_POLICY": "sdk-take-ahead", "JOBBENCH_SLOTS": str(SLOTS)}
    env["JOBBENCH_TAKE_AHEAD"] = "8"
    with httpx.Client(base_url=server.base_url) as http, worker(http, server, tmp_path, **env):
        log = burst(http, 64, 0.2)
    assert_each_job_completed_once(log, 64)
    takes = full_takes(log)
    assert [(t["asked"], t["got"]) for t in takes] == [(SLOTS, SLOTS)] * 8
    delivered = {e["job"]: e["t"] for e in of(log, "deliver")}
    finished = {e["job"]: e["t"] for e in of(log, "done")}
    done = done_by_take(log)
    for i, take in enumerate(takes[1:], start=1):
        # every later take is a take-ahead: sent while slots run, saying so
        assert take["in_progress"]
        assert [j for j in delivered if delivered[j] <= take["arrived"] < finished[j]]
        if i >= 2:  # one buffer at a time: not before the last buffer moved into slots, which
            # is once the batch before it had posted its results (a slot frees after the POST)
            assert take["arrived"] >= max(done[takes[i - 2]["take"]])


def test_job_cache_asks_three_times_its_need_and_runs_from_its_cache(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=2.0)
    env = {"JOBBENCH_POLICY": "job-cache", "JOBBENCH_SLOTS": str(SLOTS)}
    with httpx.Client(base_url=server.base_url) as http, worker(http, server, tmp_path, **env):
        log = burst(http, 64, 0.05)
    assert_each_job_completed_once(log, 64)
    takes = full_takes(log)
    # 8 free slots: min(3 x 8, 50) = 24 asked; the 16 beyond the slots wait in the cache
    assert (takes[0]["asked"], takes[0]["got"]) == (24, 24)
    assert {t["asked"] for t in takes} <= {min(3 * need, 50) for need in range(1, SLOTS + 1)}
    assert sum(t["got"] for t in takes) == 64
    # no take goes out while the cache holds a job: at each take, what the worker was handed and
    # has not finished is at most its slots (the cache is served first)
    delivered = [e["t"] for e in of(log, "deliver")]
    finished = [e["t"] for e in of(log, "done")]
    for take in takes[1:]:
        handed = sum(t <= take["arrived"] for t in delivered)
        assert handed - sum(t <= take["arrived"] for t in finished) <= SLOTS, take


# -- stop signals and shutdown ----------------------------------------------------------------
def test_stop_signals_drop_a_held_job_and_a_running_one_without_job_done(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=2.0)
    env = {"JOBBENCH_POLICY": "take-ahead", "JOBBENCH_SLOTS": "1", "JOBBENCH_TAKE_AHEAD": "1"}
    with httpx.Client(base_url=server.base_url) as http, worker(http, server, tmp_path, **env):
        inputs = [{"seconds": 3.0}, {"seconds": 3.0}, {"seconds": 0.05}]
        http.post("/_bench/burst", json={"inputs": inputs})
        a, b, c = "job-1", "job-2", "job-3"

        def has(kind: str, job: str) -> Callable[[], bool]:
            return lambda: any(e["ev"] == kind and e["job"] == job for e in events(http))

        wait_for("b delivered (held behind a)", has("deliver", b))
        http.post(f"{server.endpoint_url}/cancel/{b}")
        wait_for("the stop signal for b", has("stop", b))
        wait_for("c taken ahead", has("deliver", c))
        http.post(f"{server.endpoint_url}/cancel/{a}")
        wait_for("the stop signal for a", has("stop", a))
        wait_for("c done", has("done", c))
        log = events(http)
        state = http.get("/_bench/state").json()
    status = {e["job"]: e["status"] for e in of(log, "done")}
    assert status == {a: "CANCELLED", b: "CANCELLED", c: "COMPLETED"}
    assert not of(log, "ignored")  # neither stopped job posted job-done
    assert state["conservation"] is None
    # one slot: c finished before a's 3 s could have ended, so a's task ended at its stop
    # (and b, stopped while held, never ran)
    deliver_a = next(e["t"] for e in of(log, "deliver") if e["job"] == a)
    stop_a = next(e["t"] for e in of(log, "stop") if e["job"] == a)
    done_c = next(e["t"] for e in of(log, "done") if e["job"] == c)
    assert stop_a < done_c < deliver_a + 3e9


@pytest.mark.parametrize(
    ("policy", "sig"),
    [
        ("drain", signal.SIGTERM),
        ("take-ahead", signal.SIGINT),
        ("sdk-1.12", signal.SIGTERM),
        ("sdk-take-ahead", signal.SIGTERM),
        ("job-cache", signal.SIGINT),
    ],
)
def test_idle_worker_exits_0_at_once_cancelling_its_long_polls(
    start_server: Callable[..., RunningServer], tmp_path: Path, policy: str, sig: signal.Signals
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=10.0)
    k = "4" if policy in ("take-ahead", "sdk-take-ahead") else "0"
    env = {"JOBBENCH_POLICY": policy, "JOBBENCH_TAKE_AHEAD": k}
    with (
        httpx.Client(base_url=server.base_url) as http,
        worker(http, server, tmp_path, **env) as proc,
    ):
        proc.send_signal(sig)
        assert proc.wait(5) == 0, log_tail(tmp_path, "w1")  # well within the 10 s hold
        wait_for(
            "the take to be let go",
            lambda: any(e["ev"] == "take" and e["kind"] == "gone" for e in events(http)),
            3,
        )
        # the worker closed its long polls: none was answered by the hold running out
        assert not [e for e in of(events(http), "take") if e["kind"] == "empty"]


@pytest.mark.parametrize(
    ("policy", "finished"), [("take-ahead", 8), ("sdk-1.12", 4), ("sdk-take-ahead", 8)]
)
def test_sigterm_finishes_running_and_held_jobs_then_exits_0(
    start_server: Callable[..., RunningServer], tmp_path: Path, policy: str, finished: int
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=10.0)
    k = "4" if policy in ("take-ahead", "sdk-take-ahead") else "0"
    env = {"JOBBENCH_POLICY": policy, "JOBBENCH_SLOTS": "4", "JOBBENCH_TAKE_AHEAD": k}
    with (
        httpx.Client(base_url=server.base_url) as http,
        worker(http, server, tmp_path, **env) as proc,
    ):
        http.post("/_bench/burst", json={"count": 12, "input": {"seconds": 0.5}})
        # take-ahead: 4 running and 4 held; sdk-1.12: 4 running, the next take 1 s away
        wait_for("jobs delivered", lambda: len(of(events(http), "deliver")) == finished)
        time.sleep(ANSWER_READ_S)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(5) == 0, log_tail(tmp_path, "w1")  # well within the 10 s hold
        log = events(http)
        state = http.get("/_bench/state").json()
    done = of(log, "done")
    assert len(done) == finished and {e["status"] for e in done} == {"COMPLETED"}
    assert state["counts"]["in_queue"] == 12 - finished and state["counts"]["in_progress"] == 0
    assert state["conservation"] is None and not of(log, "ignored")


def test_job_cache_shutdown_runs_its_slots_and_leaves_its_cache_claimed(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=10.0)
    env = {"JOBBENCH_POLICY": "job-cache", "JOBBENCH_SLOTS": "4"}
    with (
        httpx.Client(base_url=server.base_url) as http,
        worker(http, server, tmp_path, **env) as proc,
    ):
        http.post("/_bench/burst", json={"count": 12, "input": {"seconds": 0.5}})
        # one take of min(3 x 4, 50) = 12: 4 to the slots, 8 to the cache
        wait_for("jobs delivered", lambda: len(of(events(http), "deliver")) == 12)
        time.sleep(ANSWER_READ_S)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(5) == 0, log_tail(tmp_path, "w1")
        log = events(http)
        state = http.get("/_bench/state").json()
    # #429 drops its cache at shutdown: those 8 stay in progress at the queue, unposted, until
    # the server would time their claim out
    assert len(of(log, "done")) == 4
    assert state["counts"]["in_progress"] == 8 and state["counts"]["in_queue"] == 0
    assert "8 cached jobs not run" in log_tail(tmp_path, "w1")


@pytest.mark.parametrize("second", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_a_second_stop_signal_while_finishing_does_not_cut_the_finish_short(
    start_server: Callable[..., RunningServer], tmp_path: Path, second: signal.Signals
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=10.0)
    env = {"JOBBENCH_POLICY": "take-ahead", "JOBBENCH_SLOTS": "4", "JOBBENCH_TAKE_AHEAD": "4"}
    with (
        httpx.Client(base_url=server.base_url) as http,
        worker(http, server, tmp_path, **env) as proc,
    ):
        http.post("/_bench/burst", json={"count": 12, "input": {"seconds": 0.5}})
        wait_for("4 running and 4 held", lambda: len(of(events(http), "deliver")) == 8)
        time.sleep(ANSWER_READ_S)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.1)  # the first has been handled (no event shows it); the jobs run 0.5 s
        proc.send_signal(second)  # while it finishes: the held jobs have not even started
        assert len(of(events(http), "done")) < 8
        assert proc.wait(5) == 0, log_tail(tmp_path, "w1")
        log = events(http)
        state = http.get("/_bench/state").json()
    done = of(log, "done")
    assert len(done) == 8, log_tail(tmp_path, "w1")  # the worker's own account, if it failed
    assert {e["status"] for e in done} == {"COMPLETED"}
    assert state["counts"]["in_queue"] == 4 and state["counts"]["in_progress"] == 0
    assert state["conservation"] is None and not of(log, "ignored")


def test_results_errors_and_heartbeat_reach_the_server_as_the_sdk_sends_them(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(take_latency=TAKE, wake_latency=WAKE, hold=2.0)
    # The ping goes to another id so the server's worker table shows it apart from the takes.
    ping = f"{server.endpoint_url}/ping/$RUNPOD_POD_ID-hb?gpu=cpu"
    env = {"JOBBENCH_SLOTS": "4", "RUNPOD_WEBHOOK_PING": ping, "RUNPOD_PING_INTERVAL": "200"}
    with httpx.Client(base_url=server.base_url) as http, worker(http, server, tmp_path, **env):
        inputs = [{"seconds": 0.01}, {"seconds": 0.01, "fail": True}]
        http.post("/_bench/burst", json={"inputs": inputs})
        wait_for("both done", lambda: len(of(events(http), "done")) == 2)
        ok = http.get(f"{server.endpoint_url}/status/job-1").json()
        failed = http.get(f"{server.endpoint_url}/status/job-2").json()
        seen: list[float] = []

        def pinged_again() -> bool:  # the heartbeat's last-seen age dropped: a new ping
            heartbeat = http.get("/_bench/workers").json().get("w1-hb")
            if heartbeat is not None:
                seen.append(heartbeat["last_seen_s"])
            return len(seen) >= 2 and seen[-1] < seen[-2]

        wait_for("the heartbeat to ping, and ping again", pinged_again, 5)
    assert ok["status"] == "COMPLETED" and ok["output"] == {"ok": True}
    assert failed["status"] == "FAILED" and "bench job asked to fail" in failed["error"]


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"JOBBENCH_POLICY": "fifo"}, "JOBBENCH_POLICY"),
        ({"JOBBENCH_SLOTS": "0"}, "JOBBENCH_SLOTS"),
        ({"JOBBENCH_POLICY": "take-ahead"}, "JOBBENCH_TAKE_AHEAD"),
        ({"JOBBENCH_POLICY": "drain", "JOBBENCH_TAKE_AHEAD": "x"}, "JOBBENCH_TAKE_AHEAD"),
        ({"RUNPOD_WEBHOOK_GET_JOB": ""}, "RUNPOD_WEBHOOK_GET_JOB"),
    ],
)
def test_bad_environment_exits_2_naming_the_variable(env: dict[str, str], named: str) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("JOBBENCH_", "RUNPOD_"))}
    full = {**base, **worker_env("http://127.0.0.1:9/v2/none", "w1"), **env}
    done = subprocess.run(WORKER, env=full, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], done.stderr


# -- the 1.12.0 port's accounting, in process (deterministic) ---------------------------------
class FakeLink(HandlerTasks):
    """Answers takes from a script, then long-polls forever; records what was asked."""

    stop_enabled = True
    answer_arrived = None  # a take is read the instant it is answered

    def __init__(self, answers: list[list[Job]]) -> None:
        self.answers = deque(answers)
        self.asked: list[int] = []

    async def take(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job]:
        self.asked.append(count)
        if on_sent is not None:
            on_sent()
        if self.answers:
            return self.answers.popleft()
        await asyncio.Event().wait()
        return []

    async def stops(self) -> list[str]:
        await asyncio.Event().wait()
        return []

    async def process(self, job: Job) -> None:
        await self.post_done(str(job["id"]), await self.handle(job))

    async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
        await asyncio.sleep(0.01)
        return {"output": None}

    async def post_done(self, job_id: str, result: dict[str, Any]) -> None:
        await asyncio.sleep(0.01)

    async def post_done_many(self, results: list[tuple[str, dict[str, Any]]]) -> None:
        await post_each(self, results)


async def asked_after_short_take(make: Callable[[FakeLink], Policy]) -> list[int]:
    link = FakeLink([[{"id": f"j{i}", "input": {}} for i in range(3)]])
    policy = make(link)
    running = asyncio.create_task(policy.run())
    await asyncio.sleep(0.05)
    policy.shutdown()
    await asyncio.wait_for(running, 5)
    return link.asked


def test_sdk_port_counts_taken_jobs_twice_until_picked_up() -> None:
    # 8 slots, a take of 3 comes back: 1.12.0 asks for 8 - (3 queued + 3 in progress) = 2
    assert asyncio.run(asked_after_short_take(lambda link: Sdk112Policy(link, 8))) == [8, 2]
    # drain asks for the 5 free slots
    assert asyncio.run(asked_after_short_take(lambda link: DrainPolicy(link, 8))) == [8, 5]


class TimelineLink(FakeLink):
    """FakeLink that logs, in order, each take as it goes on the wire and each job-done."""

    def __init__(self, answers: list[list[Job]]) -> None:
        super().__init__(answers)
        self.timeline: list[str] = []

    async def take(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job]:
        def sent() -> None:
            self.timeline.append(f"take {count}")
            if on_sent is not None:
                on_sent()

        return await super().take(count, in_progress, sent)

    async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
        await asyncio.sleep(job["input"].get("s", 0.01))
        return {"output": None}

    async def post_done(self, job_id: str, result: dict[str, Any]) -> None:
        self.timeline.append(f"done {job_id}")


def jobs(prefix: str, count: int, seconds: float = 0.01) -> list[Job]:
    return [{"id": f"{prefix}{i}", "input": {"s": seconds}} for i in range(count)]


async def run_briefly(policy: Policy, seconds: float) -> None:
    running = asyncio.create_task(policy.run())
    await asyncio.sleep(seconds)
    policy.shutdown()
    await asyncio.wait_for(running, 5)


def test_a_take_made_due_by_finished_jobs_goes_out_before_their_results() -> None:
    # drain: the batch's last job frees the worker; the next full take leaves before any result
    link = TimelineLink([jobs("a", 4), jobs("b", 4)])
    # In virtual time: on a busy machine, 0.1 s of real time ended before the second take.
    virtual_clock.run(run_briefly(DrainPolicy(link, 4), 0.1))
    first_done = min(i for i, entry in enumerate(link.timeline) if entry.startswith("done"))
    assert link.timeline[:2] == ["take 4", "take 4"] and first_done == 2, link.timeline
    assert sorted(link.timeline[2:6]) == [f"done a{i}" for i in range(4)]
    # take-ahead: held jobs move into the freed slots and the next take-ahead leaves first
    link = TimelineLink([jobs("a", 4), jobs("b", 4), jobs("c", 4)])
    asyncio.run(run_briefly(TakeAheadPolicy(link, 4, take_ahead=4), 0.1))
    assert link.timeline[:3] == ["take 4", "take 4", "take 4"], link.timeline
    assert all(entry.startswith("done") for entry in link.timeline[3:7]), link.timeline


class RanLink(TimelineLink):
    """Also logs, in the same timeline, each job's handler returning."""

    async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
        result = await super().handle(job, started)
        self.timeline.append(f"ran {job['id']}")
        return result


def test_results_are_not_held_for_jobs_still_running() -> None:
    # a short job's result goes out as soon as it ran, not when its batch drains
    link = RanLink([[*jobs("short", 1, 0.01), *jobs("long", 1, 0.3)]])
    asyncio.run(run_briefly(DrainPolicy(link, 2), 0.4))
    ran, done = link.timeline.index("ran long0"), link.timeline.index("done long0")
    assert link.timeline.index("ran short0") < link.timeline.index("done short0") < ran < done


class StartLink(TimelineLink):
    """Records the `started` each job was handed and the loop time its handler returned."""

    def __init__(self, answers: list[list[Job]]) -> None:
        super().__init__(answers)
        self.started: dict[str, float | None] = {}
        self.returned: dict[str, float] = {}

    async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
        self.started[job["id"]] = started
        result = await super().handle(job, started)
        self.returned[job["id"]] = asyncio.get_running_loop().time()
        return result


def test_a_job_is_timed_from_when_it_got_its_slot() -> None:
    # one batch shares the moment it was accepted; a held job starts when a slot frees
    link = StartLink([[*jobs("a", 1, 0.05), *jobs("b", 1, 0.1)], jobs("c", 1)])
    asyncio.run(run_briefly(TakeAheadPolicy(link, 2, take_ahead=1), 0.3))
    assert link.started["a0"] is not None and link.started["a0"] == link.started["b0"]
    held_from = link.started["c0"]
    assert held_from is not None and held_from >= link.returned["a0"] - 1e-3
    assert held_from < link.returned["b0"]


def test_bench_handler_ends_its_sleep_after_started_not_after_it_ran() -> None:
    async def elapsed(started_ago: float | None) -> float:
        loop = asyncio.get_running_loop()
        now = loop.time()
        started = None if started_ago is None else now - started_ago
        await bench_handler({"id": "j", "input": {"seconds": 0.3}}, started)
        return loop.time() - now

    # on virtual time (the loop's clock jumps to the next timer): exact, not a bound
    assert virtual_clock.run(elapsed(0.2)) == pytest.approx(0.1)  # 0.1 s left of its 0.3 s
    assert virtual_clock.run(elapsed(None)) == pytest.approx(0.3)
    assert virtual_clock.run(elapsed(0.5)) == 0.0  # started longer ago than it lasts


def test_a_job_stopped_before_its_task_ran_frees_its_slot() -> None:
    async def scenario() -> tuple[int, int]:
        policy = DrainPolicy(FakeLink([]), 2)
        policy.accept(jobs("a", 2))
        policy.stop_job("a0")  # in the same step as the take's answer: a0 never started
        freed_at_once = policy.free()
        await asyncio.sleep(0.05)  # a1 (0.01 s) has finished
        return freed_at_once, policy.free()

    assert asyncio.run(scenario()) == (1, 2)
