"""The model worker's lean HTTP client against the real fake queue on loopback."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from fake_queue import precise_loop
from fake_queue.http.server import RunningServer
from jobbench.workers.raw_http import RawClient, RawHttpError, parse_answer

FORM = {"Content-Type": "application/x-www-form-urlencoded", "charset": "utf-8"}


def take_jobs(server: RunningServer, count: int) -> list[str]:
    httpx.post(f"{server.base_url}/_bench/burst", json={"count": count, "input": {}})
    url = f"{server.endpoint_url}/job-take-batch/w1?gpu=cpu&batch_size={count}&job_in_progress=0"
    return [job["id"] for job in httpx.get(url, timeout=5).json()]


def test_posts_complete_jobs_over_few_reused_connections(server: RunningServer) -> None:
    ids = take_jobs(server, 40)

    async def post_all() -> tuple[list[int], int]:
        client = RawClient(server.endpoint_url, FORM, limit=8)
        answers = await asyncio.gather(
            *(
                client.request(
                    "POST",
                    f"{server.endpoint_url}/job-done/w1/{job}?gpu=cpu&isStream=false",
                    json.dumps({"output": {"n": i}}).encode(),
                )
                for i, job in enumerate(ids)
            )
        )
        opened = client._open
        await client.close()
        return [answer.status for answer in answers], opened

    statuses, opened = asyncio.run(post_all())
    assert statuses == [200] * 40
    assert 1 <= opened <= 8  # 40 posts, at most 8 connections, kept alive
    status = httpx.get(f"{server.endpoint_url}/status/{ids[7]}").json()
    assert status["status"] == "COMPLETED" and status["output"] == {"n": 7}


def test_a_take_answers_jobs_and_says_when_it_was_sent(server: RunningServer) -> None:
    httpx.post(f"{server.base_url}/_bench/burst", json={"count": 3, "input": {"k": 1}})
    url = f"{server.endpoint_url}/job-take-batch/w2?gpu=cpu&batch_size=5&job_in_progress=0"
    sent: list[bool] = []

    async def take() -> tuple[int, str, list[dict[str, object]], int]:
        client = RawClient(url, {}, limit=1)
        answer = await client.request("GET", url, on_sent=lambda: sent.append(True))
        empty = await client.request("GET", url.replace("w2", "w3") + "&x=1")  # 204: no body
        await client.close()
        return answer.status, answer.content_type, json.loads(answer.body), empty.status

    status, content_type, payload, empty_status = asyncio.run(take())
    assert (status, content_type, sent) == (200, "application/json", [True])
    assert [job["input"] for job in payload] == [{"k": 1}] * 3
    assert empty_status == 204


def test_a_cancelled_take_closes_its_connection_and_the_queue_keeps_the_jobs(
    server: RunningServer,
) -> None:
    url = f"{server.endpoint_url}/job-take-batch/w4?gpu=cpu&batch_size=2&job_in_progress=0"

    async def abandon() -> int:
        client = RawClient(url, {}, limit=1)
        waiting = asyncio.create_task(client.request("GET", url))  # long-polls: queue is empty
        await asyncio.sleep(0.2)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        return client._open

    assert asyncio.run(abandon()) == 0
    httpx.post(f"{server.base_url}/_bench/burst", json={"count": 2, "input": {}})
    again = httpx.get(url.replace("w4", "w5"), timeout=5)
    assert len(again.json()) == 2  # the abandoned take kept nothing


def test_error_statuses_come_back_and_refused_connections_raise(server: RunningServer) -> None:
    async def unknown_job() -> int:
        client = RawClient(server.endpoint_url, FORM)
        try:
            url = f"{server.endpoint_url}/job-done/w1/nope?x=1"
            return (await client.request("POST", url, b"{}")).status
        finally:
            await client.close()

    assert asyncio.run(unknown_job()) == 404
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once the block ends: nothing listens there
    refused = RawClient(f"http://127.0.0.1:{port}/v2/local", FORM)
    with pytest.raises(RawHttpError, match="cannot connect"):
        url = f"http://127.0.0.1:{port}/v2/local/job-done/w/j?x=1"
        asyncio.run(refused.request("POST", url, b"{}"))
    assert refused._open == 0


def test_answers_are_parsed_only_once_whole() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
    whole = bytearray(head + b"Content-Length: 2\r\n\r\n[]")
    assert parse_answer(bytearray(whole[:-1])) is None  # body not complete yet
    answer, keep, used = parse_answer(whole + b"HTTP/1.1") or pytest.fail("not parsed")
    assert (answer.status, answer.content_type, answer.body, keep) == (
        200,
        "application/json",
        b"[]",
        True,
    )
    assert used == len(whole)  # the next answer's bytes stay in the buffer
    closing = bytearray(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
    assert parse_answer(closing) is not None and not parse_answer(closing)[1]  # type: ignore[index]
    with pytest.raises(ValueError, match="chunked"):
        parse_answer(bytearray(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
    with pytest.raises(ValueError, match="HTTP/1"):
        parse_answer(bytearray(b"SSH-2.0-OpenSSH\r\n\r\n"))


def test_only_plain_http_is_accepted() -> None:
    assert RawClient.accepts("http://127.0.0.1:1/v2/x/job-done/$ID?a=1")
    assert not RawClient.accepts("https://api.runpod.ai/v2/x/job-done/$ID?a=1")
    with pytest.raises(ValueError, match="plain http"):
        RawClient("https://api.runpod.ai/v2/x", {})


def test_pipelined_posts_go_in_one_write_and_come_back_in_order(server: RunningServer) -> None:
    ids = take_jobs(server, 40)
    requests = [
        (f"{server.endpoint_url}/job-done/w1/{job}?isStream=false", b'{"output": %d}' % i)
        for i, job in enumerate(ids)
    ]
    requests.insert(5, (f"{server.endpoint_url}/job-done/w1/never-taken?isStream=false", b"{}"))

    async def post_all() -> tuple[list[int], int]:
        client = RawClient(server.endpoint_url, FORM, limit=8)
        answers = await client.pipeline("POST", requests)
        opened = client._open
        await client.close()
        return [a.status if not isinstance(a, RawHttpError) else 0 for a in answers], opened

    statuses, opened = asyncio.run(post_all())
    assert statuses == [200] * 5 + [404] + [200] * 35
    assert opened == 1
    status = httpx.get(f"{server.endpoint_url}/status/{ids[7]}").json()
    assert status["status"] == "COMPLETED" and status["output"] == 7


def job_of(path: str) -> str:
    return path.split("/")[-1].split("?")[0]


class CuttingServer:
    """Reads whatever comes; on its first connection answers only the first request, then
    closes; on later ones answers every request 200 (or `status`). Notes each request's path."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.connections: list[list[str]] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen: list[str] = []
        self.connections.append(seen)
        first = len(self.connections) == 1
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            lines = head.decode().split("\r\n")
            sizes = [int(x.split(":")[1]) for x in lines if x.lower().startswith("content-length")]
            await reader.readexactly(sizes[0])
            seen.append(lines[0].split(" ")[1])
            status = 200 if first else self.status
            writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: 2\r\n\r\n{{}}".encode())
            if first:
                await asyncio.sleep(0.05)  # the rest of the pipeline arrives, unanswered
                break
        writer.close()


def test_a_pipeline_cut_short_loses_one_post_and_sends_the_unread_ones_again(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from jobbench.workers import http_link
    from jobbench.workers.policy_worker_config import Config

    monkeypatch.setattr(http_link, "DONE_RETRY_PAUSES_S", (0.01, 0.01))

    async def run(status: int) -> CuttingServer:
        cutter = CuttingServer(status)
        listener = await asyncio.start_server(cutter.serve, "127.0.0.1", 0)
        base = f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}/v2/local"
        config = Config(
            "take-ahead", 8, 8, "w1", f"{base}/job-take/w1?x=1", f"{base}/job-done/w1/$ID?x=1",
            None, 10.0, None,
        )  # fmt: skip
        lean = (RawClient(config.take_url, {}), RawClient(config.done_url, FORM))
        link = http_link.HttpLink(config, None, lean)  # type: ignore[arg-type]
        await link.post_done_many([(f"j{i}", {"output": i}) for i in range(6)])
        for client in lean:
            await client.close()
        listener.close()
        return cutter

    cutter = asyncio.run(run(200))
    first, *later = cutter.connections
    assert first == ["/v2/local/job-done/w1/j0?x=1&isStream=false"]  # all 6 sent, 1 answered
    again = sorted(job_of(path) for conn in later for path in conn)
    assert again == ["j2", "j3", "j4", "j5"]  # j1, the first unanswered: lost and logged
    assert "job-done for j1 failed" in capsys.readouterr().err

    cutter = asyncio.run(run(500))  # the resent ones answered 500: retried twice more each
    again = [job_of(path) for conn in cutter.connections[1:] for path in conn]
    assert sorted(again) == sorted(["j2", "j3", "j4", "j5"] * 3)
    assert capsys.readouterr().err.count("answered 500 3 times; result lost") == 4


def test_an_answer_says_when_the_loop_found_its_first_bytes(server: RunningServer) -> None:
    httpx.post(f"{server.base_url}/_bench/burst", json={"count": 2, "input": {}})
    url = f"{server.endpoint_url}/job-take-batch/w9?gpu=cpu&batch_size=2&job_in_progress=0"
    loop = precise_loop.new_event_loop()

    async def take() -> tuple[float, float, float]:
        client = RawClient(url, {}, limit=1)
        sent = loop.time()
        answer = await client.request("GET", url)
        resumed = loop.time()
        await client.close()
        assert answer.status == 200
        return sent, answer.arrived, resumed

    try:
        sent, arrived, resumed = loop.run_until_complete(take())
    finally:
        loop.close()
    assert sent < arrived <= resumed  # the wake-up that found it, before the reader resumed
