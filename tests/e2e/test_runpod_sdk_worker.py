"""The real runpod 1.12.0 worker against the fake queue: it cannot tell it from the platform."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from pathlib import Path

import httpx

from fake_queue.http.server import RunningServer
from jobbench.procs.groups import group_alive
from jobbench.workers.spec import WorkerSpec
from tests.e2e.helpers import run_burst, spawn_worker, wait_polling


def test_real_sdk_worker_drains_burst_in_full_batches_about_take_plus_1s_apart(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(take_latency=0.05, wake_latency=0.005, hold=2.0)
    worker = spawn_worker(server, WorkerSpec(kind="runpod"), "sdk-w0", 32, tmp_path)
    try:
        wait_polling(server, [worker], tmp_path)
        events = run_burst(server, 96, {"seconds": 0.05})
    finally:
        worker.stop()
    done = [e for e in events if e["ev"] == "done"]
    assert len(done) == 96 and {e["status"] for e in done} == {"COMPLETED"}
    assert len({e["job"] for e in done}) == 96
    takes = sorted(
        (e for e in events if e["ev"] == "take" and e["got"] > 0), key=lambda e: e["arrived"]
    )
    # 32 slots: three full batches of 32, each asked for with batch_size=32
    assert [(t["asked"], t["got"]) for t in takes] == [(32, 32)] * 3
    # SDK 1.12.0 takes again only when it has room, and re-checks every 1 s when full: each
    # batch is asked for after the last one's every job is done (an order, whatever the load),
    # at a whole second after the take's answer that finds it done: the first one on a quiet
    # machine. A loaded machine may keep the worker from seeing its room at that second (its
    # slots free only when its job-done POSTs return), and it asks at the next: a batch done
    # 0.23 s after its answer was asked for after 2.03 s beside the suite. So a gap lies from
    # the first whole second that may find the batch done to the one after the last: a worker
    # that asked as soon as it had room, or on a shorter tick, asks before the first.
    for before, after in itertools.pairwise(takes):
        batch = {e["job"] for e in events if e["ev"] == "deliver" and e["take"] == before["take"]}
        assert len(batch) == 32
        last_done = max(e["t"] for e in done if e["job"] in batch)
        assert last_done < after["arrived"], (before, after)
        # (A batch done within 10 ms of a whole second may be seen at it or at the next: its
        # slots free when the job-done POSTs return, a little after the queue saw them.)
        done_after_s = (last_done - before["t"]) / 1e9
        first, last = (max(1, math.ceil(done_after_s + d)) for d in (-0.01, 0.01))
        gap = (after["arrived"] - before["arrived"]) / 1e9
        assert first <= gap < last + 2.0, (gap, done_after_s)
    # the bench handler's output came back through job-done, posted as form-encoded JSON
    job_id = done[0]["job"]
    status = httpx.get(f"{server.endpoint_url}/status/{job_id}").json()
    assert status["status"] == "COMPLETED" and status["output"] == {"ok": True}
    assert status["workerId"] == "sdk-w0"
    assert not group_alive(worker.popen.pid)  # type: ignore[union-attr]


def test_real_sdk_worker_reports_handler_errors_as_failed(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(take_latency=0.05, wake_latency=0.005, hold=2.0)
    worker = spawn_worker(server, WorkerSpec(kind="runpod"), "sdk-w1", 4, tmp_path)
    try:
        wait_polling(server, [worker], tmp_path)
        events = run_burst(server, 3, {"seconds": 0.01, "fail": True})
    finally:
        worker.stop()
    done = [e for e in events if e["ev"] == "done"]
    assert [e["status"] for e in done] == ["FAILED"] * 3
    status = httpx.get(f"{server.endpoint_url}/status/{done[0]['job']}").json()
    assert "bench job asked to fail" in status["error"]
