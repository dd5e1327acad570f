"""Live mode's driver against the in-process fake queue's client API (no workers needed)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable

import httpx

from fake_queue.http.server import RunningServer
from jobbench.clients.endpoint import Endpoint
from jobbench.clients.live_burst import BurstPlan, BurstRecord, LiveBurst
from jobbench.clients.live_http import LiveHttp


async def _stop_when_submitted(burst: LiveBurst, stop: asyncio.Event) -> None:
    while any(job.outcome == "unsent" for job in burst.record.jobs):
        await asyncio.sleep(0.01)
    stop.set()


async def _burst_then_stop(server: RunningServer, n: int) -> BurstRecord:
    http = LiveHttp(Endpoint(server.endpoint_url, "sekrit"))
    plan = BurstPlan(tuple({"seconds": 1} for _ in range(n)), None, timeout_s=30)
    burst = LiveBurst(http, plan, lambda done, total: None)
    stop, hard = asyncio.Event(), asyncio.Event()
    try:
        watcher = asyncio.create_task(_stop_when_submitted(burst, stop))
        record = await burst.run(stop, hard)
        await watcher
        return record
    finally:
        await http.close()


def test_retries_only_refusals_never_unknown_outcomes_and_cancels_on_stop(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(api_key="sekrit", fault=["run:drop:0.2", "run:429:0.3"], seed=3)
    record = asyncio.run(_burst_then_stop(server, 40))
    outcomes = Counter(job.outcome for job in record.jobs)
    accepted = [job for job in record.jobs if job.outcome == "accepted"]
    assert outcomes["unknown"] > 0 and outcomes["accepted"] > 0
    assert outcomes["accepted"] + outcomes["unknown"] == 40
    assert record.counts["run_throttled"] > 0
    assert len({job.id for job in accepted}) == len(accepted)
    headers = {"Authorization": "Bearer sekrit"}
    counts = httpx.get(server.base_url + "/_bench/state", headers=headers).json()["counts"]
    # Dropped requests never reached the handler: the server holds exactly the accepted jobs.
    assert counts["submitted"] == len(accepted)
    assert record.stopped == "interrupted"
    assert counts["cancelled"] == len(accepted) == record.counts["cancelled"]
    assert counts["in_queue"] == 0


def test_an_unexpected_error_still_cancels_the_accepted_jobs_then_surfaces(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(api_key="sekrit")

    async def scenario() -> BaseException | None:
        http = LiveHttp(Endpoint(server.endpoint_url, "sekrit"))
        plan = BurstPlan(tuple({"seconds": 5} for _ in range(6)), None, timeout_s=30)
        burst = LiveBurst(http, plan, lambda done, total: None)

        async def broken_health() -> None:  # a bug in one of the burst's tasks, mid-burst
            while any(job.outcome == "unsent" for job in burst.record.jobs):
                await asyncio.sleep(0.01)
            raise RuntimeError("boom")

        burst._sample_health = broken_health  # type: ignore[method-assign]
        try:
            await burst.run(asyncio.Event(), asyncio.Event())
        except RuntimeError as exc:
            return exc
        finally:
            await http.close()
        return None

    raised = asyncio.run(scenario())
    assert isinstance(raised, RuntimeError) and str(raised) == "boom"
    headers = {"Authorization": "Bearer sekrit"}
    counts = httpx.get(server.base_url + "/_bench/state", headers=headers).json()["counts"]
    assert counts["submitted"] == 6 and counts["cancelled"] == 6
