"""The model worker's lean job-done client against the real fake queue on loopback."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from fake_queue.server import RunningServer
from jobbench.workers.raw_http import MAX_CONNECTIONS, RawHttpError, RawPoster

FORM = {"Content-Type": "application/x-www-form-urlencoded", "charset": "utf-8"}


def take_jobs(server: RunningServer, count: int) -> list[str]:
    httpx.post(f"{server.base_url}/_bench/burst", json={"count": count, "input": {}})
    url = f"{server.endpoint_url}/job-take-batch/w1?gpu=cpu&batch_size={count}&job_in_progress=0"
    return [job["id"] for job in httpx.get(url, timeout=5).json()]


def test_posts_complete_jobs_over_few_reused_connections(server: RunningServer) -> None:
    ids = take_jobs(server, 40)

    async def post_all() -> tuple[list[int], int]:
        poster = RawPoster(server.endpoint_url, FORM)
        statuses = await asyncio.gather(
            *(
                poster.post(
                    f"{server.endpoint_url}/job-done/w1/{job}?gpu=cpu&isStream=false",
                    json.dumps({"output": {"n": i}}).encode(),
                )
                for i, job in enumerate(ids)
            )
        )
        opened = poster._open
        await poster.close()
        return list(statuses), opened

    statuses, opened = asyncio.run(post_all())
    assert statuses == [200] * 40
    assert 1 <= opened <= MAX_CONNECTIONS  # 40 posts, at most 8 connections, kept alive
    status = httpx.get(f"{server.endpoint_url}/status/{ids[7]}").json()
    assert status["status"] == "COMPLETED" and status["output"] == {"n": 7}


def test_error_statuses_come_back_and_refused_connections_raise(server: RunningServer) -> None:
    async def unknown_job() -> int:
        poster = RawPoster(server.endpoint_url, FORM)
        try:
            return await poster.post(f"{server.endpoint_url}/job-done/w1/nope?x=1", b"{}")
        finally:
            await poster.close()

    assert asyncio.run(unknown_job()) == 404
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once the block ends: nothing listens there
    refused = RawPoster(f"http://127.0.0.1:{port}/v2/local", FORM)
    with pytest.raises(RawHttpError, match="cannot connect"):
        asyncio.run(refused.post(f"http://127.0.0.1:{port}/v2/local/job-done/w/j?x=1", b"{}"))
    assert refused._open == 0


def test_only_plain_http_is_accepted() -> None:
    assert RawPoster.accepts("http://127.0.0.1:1/v2/x/job-done/$ID?a=1")
    assert not RawPoster.accepts("https://api.runpod.ai/v2/x/job-done/$ID?a=1")
    with pytest.raises(ValueError, match="plain http"):
        RawPoster("https://api.runpod.ai/v2/x", {})
