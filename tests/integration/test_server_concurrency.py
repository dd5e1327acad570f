"""Concurrency: many takes at once, bursts, and clients that go away mid-take.

A take whose client left must keep nothing: jobs it claimed go back to the front of the queue
(a `requeue` event) and are delivered later, once. The event log is the witness: no job has two
`deliver` events without a `requeue` between them, and every job ends delivered exactly once net.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
import struct
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import httpx
import pytest

from fake_queue.http.server import RunningServer

E = "/v2/local"


# ---- helpers ------------------------------------------------------------------------------------


def all_events(http: httpx.Client) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = 0
    while True:
        page = http.get("/_bench/events", params={"cursor": cursor}).json()
        out += page["events"]
        if not page["events"]:
            return out
        cursor = page["next"]


def wait_until(predicate: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def parse_raw_response(data: bytes) -> tuple[int, Any] | None:
    """A complete HTTP/1.1 response from raw bytes, or None if it is incomplete."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return None
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    length = int(headers.get("content-length", "0"))
    if len(rest) < length:
        return None
    return status, (json.loads(rest[:length]) if length else None)


async def raw_take(
    host: str, port: int, path: str, give_up_s: float, rst: bool
) -> tuple[tuple[int, Any] | None, int | None]:
    """GET over a raw socket; close it after give_up_s unless the answer came first.
    Returns (response or None, monotonic ns right after closing, or None if not given up)."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode()
    )
    await writer.drain()
    data = b""
    deadline = time.monotonic() + give_up_s
    try:
        while parse_raw_response(data) is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                chunk = await asyncio.wait_for(reader.read(65536), remaining)
            except TimeoutError:
                break
            if not chunk:
                break
            data += chunk
    finally:
        got = parse_raw_response(data)
        if got is None and rst:
            sock = writer.get_extra_info("socket")
            if sock is not None:  # abortive close: RST instead of FIN
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()
    return got, (None if got is not None else time.monotonic_ns())


@dataclass
class Attempt:
    worker: str
    mode: str
    asked: int
    received: list[str] = field(default_factory=list)
    status: int | None = None
    gave_up_ns: int | None = None  # set when the client went away without an answer


# ---- the disconnect during the take-latency window ----------------------------------------------


@pytest.mark.parametrize("how", ["httpx", "aiohttp", "raw", "raw-rst"])
def test_client_leaving_during_take_latency_requeues_its_jobs_at_the_front(
    start_server: Callable[..., RunningServer], how: str
) -> None:
    server = start_server(take_latency=0.3, hold=2.0)
    host, port = server.settings.host, server.settings.port
    path = f"{E}/job-take-batch/leaver?batch_size=2"
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        http.post("/_bench/burst", json={"count": 3})

        async def leave() -> None:
            if how == "httpx":
                async with httpx.AsyncClient(base_url=server.base_url, timeout=0.1) as c:
                    with pytest.raises(httpx.TimeoutException):
                        await c.get(path)
            elif how == "aiohttp":
                async with aiohttp.ClientSession() as session:
                    with pytest.raises(asyncio.TimeoutError):
                        async with session.get(
                            f"{server.base_url}{path}", timeout=aiohttp.ClientTimeout(total=0.1)
                        ) as r:
                            await r.read()
            else:
                got, gave_up = await raw_take(host, port, path, 0.1, rst=how == "raw-rst")
                assert got is None and gave_up is not None

        asyncio.run(leave())
        # the server notices (at the latest when the answer is due) and puts the jobs back
        wait_until(lambda: any(e["ev"] == "requeue" for e in all_events(http)))
        r = http.get(f"{E}/job-take-batch/next?batch_size=3")
        assert r.status_code == 200
        assert [j["id"] for j in r.json()] == ["job-1", "job-2", "job-3"]  # front, in order

        evs = all_events(http)
        gone = [e for e in evs if e["ev"] == "take" and e["worker"] == "leaver"]
        assert len(gone) == 1 and gone[0]["kind"] == "gone" and gone[0]["got"] == 0
        take_id = gone[0]["take"]
        claims = [e for e in evs if e["ev"] == "claim" and e["take"] == take_id]
        requeues = [e for e in evs if e["ev"] == "requeue" and e["take"] == take_id]
        assert sorted(e["job"] for e in claims) == ["job-1", "job-2"]
        assert sorted(e["job"] for e in requeues) == ["job-1", "job-2"]
        assert not [e for e in evs if e["ev"] == "deliver" and e["worker"] == "leaver"]
        # it left ~0.1 s after asking (its claim may be later still on a busy machine); the
        # server let go of the jobs after claiming them and no later than the answer was due
        assert all(e["t"] >= claims[-1]["t"] for e in requeues)
        due = claims[0]["t"] + 300_000_000
        assert all(e["t"] <= due + 200_000_000 for e in requeues)
        delivered = [e for e in evs if e["ev"] == "deliver"]
        assert [(e["job"], e["worker"]) for e in delivered] == [
            ("job-1", "next"),
            ("job-2", "next"),
            ("job-3", "next"),
        ]
        assert http.get("/_bench/state").json()["conservation"] is None


def test_a_waiting_take_whose_client_left_claims_nothing(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(hold=5.0)
    with httpx.Client(base_url=server.base_url, timeout=10) as http:

        async def leave() -> None:
            async with httpx.AsyncClient(base_url=server.base_url, timeout=0.1) as c:
                with pytest.raises(httpx.TimeoutException):
                    await c.get(f"{E}/job-take/leaver")

        asyncio.run(leave())
        # the server must notice while the take waits, not only when jobs arrive
        wait_until(lambda: http.get("/_bench/state").json()["waiting_takes"] == 0, 3.0)
        http.post("/_bench/burst", json={"count": 1})
        r = http.get(f"{E}/job-take/next")
        assert r.status_code == 200 and r.json()["id"] == "job-1"
        evs = all_events(http)
        (gone,) = [e for e in evs if e["ev"] == "take" and e["worker"] == "leaver"]
        assert gone["kind"] == "gone" and gone["got"] == 0
        assert not [e for e in evs if e.get("take") == gone["take"] and e["ev"] == "claim"]


@pytest.mark.parametrize("rst", [True, False])
def test_client_leaving_while_a_large_answer_is_written_gets_its_jobs_requeued(
    start_server: Callable[..., RunningServer], rst: bool
) -> None:
    """BUG (worker_routes.py _take): once deliver() ran, a client that goes away while the
    answer is still being written (a big payload blocks in drain) makes aiohttp cancel the
    handler; the CancelledError branch calls abandon(), a no-op for a settled take, and
    undeliver() is never called. The job stays IN_PROGRESS on a worker that never got it."""
    server = start_server(take_latency=0.05, hold=2.0)
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        r = http.post(f"{E}/run", json={"input": {"blob": "x" * 8_000_000}})
        job_id = r.json()["id"]
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((server.settings.host, server.settings.port))
        sock.sendall(f"GET {E}/job-take/reader HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        # wait until the server has started answering (the deliver event), never read it all
        wait_until(lambda: any(e["ev"] == "deliver" for e in all_events(http)), 3.0)
        if rst:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        with contextlib.suppress(AssertionError):
            wait_until(lambda: any(e["ev"] == "requeue" for e in all_events(http)), 2.0)
        evs = [(e["ev"], e.get("job")) for e in all_events(http) if e["ev"] != "take"]
        assert ("requeue", job_id) in evs, f"no requeue after a half-written answer: {evs}"
        assert http.get(f"{E}/status/{job_id}").json()["status"] == "IN_QUEUE"


# ---- 64 clients, bursts, random disconnects ------------------------------------------------------


MODES = ["normal", "normal", "normal", "httpx-short", "aiohttp-cancel", "raw", "raw-rst"]


async def hammer(
    server: RunningServer, n_clients: int, n_bursts: int, seed: int
) -> tuple[list[Attempt], int]:
    rng = random.Random(seed)
    host, port = server.settings.host, server.settings.port
    attempts: list[Attempt] = []
    draining = asyncio.Event()
    submitted = 0
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=n_clients)
    async with (
        httpx.AsyncClient(base_url=server.base_url, timeout=10, limits=limits) as http,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session,
    ):

        async def client(i: int) -> None:
            n = 0
            crng = random.Random(seed * 1000 + i)
            while not draining.is_set():
                n += 1
                mode = crng.choice(MODES)
                attempt = Attempt(f"c{i}-{n}", mode, crng.randint(1, 8))
                attempts.append(attempt)
                path = (
                    f"{E}/job-take-batch/{attempt.worker}?batch_size={attempt.asked}"
                    f"&job_in_progress={crng.randint(0, 1)}"
                )
                give_up = crng.uniform(0.005, 0.12)
                try:
                    if mode == "normal":
                        r = await http.get(path)
                        attempt.status = r.status_code
                        if r.status_code == 200:
                            attempt.received = [j["id"] for j in r.json()]
                    elif mode == "httpx-short":
                        r = await http.get(path, timeout=give_up)
                        attempt.status = r.status_code
                        if r.status_code == 200:
                            attempt.received = [j["id"] for j in r.json()]
                    elif mode == "aiohttp-cancel":
                        async with session.get(
                            f"{server.base_url}{path}", timeout=aiohttp.ClientTimeout(total=give_up)
                        ) as r:
                            attempt.status = r.status
                            body = await r.read()
                            if r.status == 200:
                                attempt.received = [j["id"] for j in json.loads(body)]
                    else:
                        got, gave_up = await raw_take(
                            host, port, path, give_up, rst=mode == "raw-rst"
                        )
                        if got is not None:
                            attempt.status = got[0]
                            if got[0] == 200:
                                attempt.received = [j["id"] for j in got[1]]
                        attempt.gave_up_ns = gave_up
                except (TimeoutError, httpx.TimeoutException):
                    attempt.gave_up_ns = time.monotonic_ns()

        async def burster() -> None:
            nonlocal submitted
            for _ in range(n_bursts):
                # mostly small bursts (waiting takes are woken), some big ones (a backlog forms,
                # takes claim on arrival and wait out the take latency: the window to leave in)
                count = rng.randint(100, 250) if rng.random() < 0.3 else rng.randint(1, 40)
                r = await http.post("/_bench/burst", json={"count": count})
                assert r.status_code == 200
                submitted += count
                await asyncio.sleep(rng.uniform(0.01, 0.08))

        tasks = [asyncio.create_task(client(i)) for i in range(n_clients)]
        await burster()
        deadline = time.monotonic() + 20
        while (await http.get("/_bench/state")).json()["counts"]["in_queue"] > 0:
            assert time.monotonic() < deadline, "the queue never drained"
            await asyncio.sleep(0.02)
        draining.set()
        await asyncio.gather(*tasks)
        # a requeue racing the drain check: hand it out to a patient client
        while (await http.get("/_bench/state")).json()["counts"]["in_queue"] > 0:
            assert time.monotonic() < deadline, "the queue never drained"
            attempt = Attempt(f"final-{len(attempts)}", "normal", 50)
            attempts.append(attempt)
            r = await http.get(f"{E}/job-take-batch/{attempt.worker}?batch_size=50")
            attempt.status = r.status_code
            if r.status_code == 200:
                attempt.received = [j["id"] for j in r.json()]
    return attempts, submitted


# A client that gives up at time T can still lose a job whose answer the server wrote just before
# it saw the close (TCP cannot tell it otherwise). A deliver later than this after the client
# recorded its close means the server answered a client it should have known was gone.


def test_many_clients_bursts_and_disconnects_deliver_every_job_once(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(take_latency=0.2, wake_latency=0.005, hold=0.4)
    attempts, submitted = asyncio.run(hammer(server, n_clients=64, n_bursts=16, seed=7))

    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        st = http.get("/_bench/state").json()
        evs = all_events(http)
    assert st["conservation"] is None
    assert st["counts"]["submitted"] == submitted
    assert st["counts"]["in_queue"] == 0
    assert st["counts"]["in_progress"] == submitted  # nothing was completed in this test

    by_worker = {a.worker: a for a in attempts}
    # -- the client side: never more than asked, never the same job twice
    receivers: dict[str, list[str]] = defaultdict(list)
    for a in attempts:
        assert len(a.received) <= a.asked, a
        for job in a.received:
            receivers[job].append(a.worker)
    doubles = {job: ws for job, ws in receivers.items() if len(ws) > 1}
    assert not doubles, f"jobs received by two takes: {doubles}"

    # -- the server side: claim -> (deliver | requeue), no double deliver, net once
    delivered_to: dict[str, str | None] = {}
    pending_claim: dict[str, int] = {}
    deliveries: dict[str, int] = defaultdict(int)
    for e in evs:
        job, ev = e.get("job"), e["ev"]
        if ev == "claim":
            assert job not in pending_claim, f"{job} claimed twice: {e}"
            assert delivered_to.get(job) is None, f"{job} claimed while delivered: {e}"
            pending_claim[job] = e["take"]
        elif ev == "deliver":
            assert pending_claim.pop(job, None) == e["take"], f"deliver without claim: {e}"
            assert delivered_to.get(job) is None, f"{job} delivered twice without requeue"
            delivered_to[job] = e["worker"]
            deliveries[job] += 1
        elif ev == "requeue":
            if job in pending_claim:
                assert pending_claim.pop(job) == e["take"], e
            else:
                assert delivered_to.get(job) == e["worker"], f"requeue of a job not held: {e}"
            delivered_to[job] = None
    assert not pending_claim
    submitted_ids = {e["job"] for e in evs if e["ev"] == "submit"}
    assert len(submitted_ids) == submitted
    never = [j for j in submitted_ids if delivered_to.get(j) is None]
    assert not never, f"{len(never)} jobs never delivered: {sorted(never)[:10]}"

    # -- each take event agrees with its jobs
    delivered_per_take: dict[int, int] = defaultdict(int)
    for e in evs:
        if e["ev"] == "deliver":
            delivered_per_take[e["take"]] += 1
    for e in evs:
        if e["ev"] == "take":
            assert e["got"] <= e["asked"]
            if e["kind"] in ("gone", "empty"):
                assert e["got"] == 0 and delivered_per_take[e["take"]] == 0, e
            else:
                assert e["got"] == delivered_per_take[e["take"]], e

    # -- tie the two sides together
    received_by = {job: ws[0] for job, ws in receivers.items()}
    lost_in_race = []
    for job in submitted_ids:
        worker = delivered_to[job]
        assert worker is not None
        if received_by.get(job) == worker:
            continue
        # received by nobody (or by someone else: then it was requeued, caught above)
        assert job not in received_by, f"{job} received by {received_by[job]}, held by {worker}"
        attempt = by_worker[worker]
        assert attempt.gave_up_ns is not None, f"{job} delivered to {attempt} but not received"
        lost_in_race.append(job)

    # the scenario really exercised disconnects and requeues
    requeues = [e for e in evs if e["ev"] == "requeue"]
    assert len(requeues) > 0
    assert any(e["ev"] == "take" and e["kind"] == "gone" for e in evs)
    assert sum(1 for a in attempts if a.gave_up_ns is not None) > 10
    # A lost answer (written just before the client gave up, not read by it) is the exception,
    # and every one went to a client that gave up (asserted above): a server that never noticed
    # a disconnect would requeue nothing and log no `gone` take (asserted here). How many are
    # lost depends on how soon a loaded server notices: 75-128 of 892 jobs on a quiet 2-core
    # machine, 284 under a CI run's load; so it is not bounded, only every loss explained.
    print(
        f"\n{submitted} jobs, {len(attempts)} takes, {len(requeues)} requeues, "
        f"{sum(deliveries.values())} deliver events, {len(lost_in_race)} lost in the race"
    )
