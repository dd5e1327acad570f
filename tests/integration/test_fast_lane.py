"""The fast lane (fake_queue.http.fast_path, lane_handler) against aiohttp's routes, on a real
server on loopback: the same answers, in order when pipelined, done latencies concurrent, and every
request the lane must not judge passed to aiohttp."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

import fake_queue.http.server
from fake_queue.http.fast_path import Unframeable, frame
from fake_queue.http.server import RunningServer
from fake_queue.settings import MAX_BATCH_SIZE

E = "/v2/local"
HOST = "Host: q\r\n"


def read_answers(sock: socket.socket, count: int, timeout_s: float = 5.0) -> list[bytes]:
    """`count` whole answers (head and body) as they come, in order."""
    sock.settimeout(timeout_s)
    buffer, answers = b"", []
    while len(answers) < count:
        end = buffer.find(b"\r\n\r\n")
        if end >= 0:
            head = buffer[:end].decode()
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if len(buffer) >= end + 4 + length:
                answers.append(buffer[: end + 4 + length])
                buffer = buffer[end + 4 + length :]
                continue
        chunk = sock.recv(65536)
        assert chunk, f"closed after {len(answers)} of {count} answers"
        buffer += chunk
    return answers


def shape(answer: bytes) -> tuple[str, dict[str, str], bytes]:
    """Status line, the headers that do not change with time, and the body."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    assert headers.pop("Date").endswith(" GMT") and headers.pop("Server").startswith("Python/")
    return status, headers, body


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: q\r\n\r\n".encode()


def post(path: str, body: object) -> bytes:
    data = json.dumps(body).encode()
    head = f"POST {path} HTTP/1.1\r\nHost: q\r\nContent-Type: application/x-www-form-urlencoded"
    return f"{head}\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data


@pytest.fixture
def connect() -> Iterator[Callable[[RunningServer], socket.socket]]:
    opened: list[socket.socket] = []

    def open_one(server: RunningServer) -> socket.socket:
        sock = socket.create_connection((server.settings.host, server.settings.port))
        opened.append(sock)
        return sock

    yield open_one
    for sock in opened:
        sock.close()


def exchange(server: RunningServer, sock: socket.socket) -> list[bytes]:
    """One worker's life in requests: takes (a job, a batch, none), done, a done refused."""
    httpx.post(f"{server.base_url}/_bench/burst", json={"count": 3, "input": {"k": "é"}})
    answers = []
    for request in (
        get(f"{E}/job-take/w1?gpu=cpu&job_in_progress=0"),
        get(f"{E}/job-take-batch/w1?gpu=cpu&batch_size=5&job_in_progress=1"),
        post(f"{E}/job-done/w1/job-1?gpu=cpu&isStream=false", {"output": {"n": 1}}),
        post(f"{E}/job-done/w1/job-9?gpu=cpu&isStream=false", {"output": 1}),
        post(f"{E}/job-done/w2/job-2?gpu=cpu&isStream=false", {"output": 1}),
        get(f"{E}/job-take/w1?gpu=cpu&job_in_progress=0"),  # nothing queued: 204 after hold
    ):
        sock.sendall(request)
        answers += read_answers(sock, 1)
    return answers


def test_the_lane_answers_as_aiohttps_routes_do(
    start_server: Callable[..., RunningServer],
    connect: Callable[[RunningServer], socket.socket],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lane_server = start_server(hold=0.2)
    assert lane_server.runner.server is not None
    assert getattr(lane_server.runner.server, "lane", None) is not None
    with monkeypatch.context() as patched:
        patched.setattr(fake_queue.http.server.FastLane, "serving", lambda *_: None)
        plain_server = start_server(hold=0.2)
    assert getattr(plain_server.runner.server, "lane", "missing") is None

    lane = [shape(a) for a in exchange(lane_server, connect(lane_server))]
    plain = [shape(a) for a in exchange(plain_server, connect(plain_server))]
    assert lane == plain
    statuses = [status for status, _, _ in lane]
    assert statuses == [f"HTTP/1.1 {n}" for n in ("200 OK",) * 3 + ("404 Not Found",) * 2] + [
        "HTTP/1.1 204 No Content"
    ]
    events = httpx.get(f"{lane_server.base_url}/_bench/events").json()["events"]
    done = [e for e in events if e["ev"] == "done"]
    assert [e["job"] for e in done] == ["job-1"]


def test_pipelined_results_are_answered_in_order_each_after_its_own_done_latency(
    start_server: Callable[..., RunningServer],
    connect: Callable[[RunningServer], socket.socket],
) -> None:
    server = start_server(done_latency=0.1)
    httpx.post(f"{server.base_url}/_bench/burst", json={"count": 32})
    taken = httpx.get(f"{server.endpoint_url}/job-take-batch/w1?batch_size=32", timeout=5).json()
    ids = [job["id"] for job in taken]
    sock = connect(server)
    wire = b"".join(post(f"{E}/job-done/w1/{i}?isStream=false", {"output": i}) for i in ids)
    wire += get(f"{E}/health")  # aiohttp's route, answered after the 32 before it
    wire += post(f"{E}/job-done/w1/job-999?isStream=false", {"output": 0})  # refused: 404
    started = time.monotonic()
    sock.sendall(wire)
    answers = [shape(a) for a in read_answers(sock, 34)]
    elapsed = time.monotonic() - started

    assert [json.loads(body) for _, _, body in answers[:32]] == [
        {"ok": True, "recorded": "done"}
    ] * 32
    assert "jobs" in json.loads(answers[32][2])  # /health, in its place
    assert answers[33][0] == "HTTP/1.1 404 Not Found"
    # Concurrent, as 32 POSTs on 32 connections: not 32 done latencies one after another.
    assert elapsed < 0.1 * 5
    events = httpx.get(f"{server.base_url}/_bench/events").json()["events"]
    done_at = {e["job"]: e["t"] for e in events if e["ev"] == "done"}
    assert sorted(done_at) == sorted(ids)
    assert max(done_at.values()) - min(done_at.values()) < 50e6  # recorded on arrival


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (get(f"{E}/job-take-batch/w1?batch_size=0"), 400),
        (get(f"{E}/job-take-batch/w1?batch_size={MAX_BATCH_SIZE + 1}"), 400),
        (get(f"{E}/job-take-batch/w1?batch_size=x"), 400),
        (post(f"{E}/job-done/w1/job-1", [1, 2]), 400),
        (
            f"POST {E}/job-done/w1/job-1 HTTP/1.1\r\n{HOST}Content-Length: 2\r\n\r\n{{x".encode(),
            400,
        ),
        (f"GET {E}/job-take/w1 HTTP/1.1\r\n\r\n".encode(), 400),  # no Host
        (get(f"{E}/job-take/w%31"), 204),  # decoded by aiohttp: worker "w1"
    ],
)
def test_requests_the_lane_must_not_judge_get_aiohttps_answer(
    start_server: Callable[..., RunningServer],
    connect: Callable[[RunningServer], socket.socket],
    request_bytes: bytes,
    status: int,
) -> None:
    server = start_server(hold=0.1)
    sock = connect(server)
    sock.sendall(request_bytes)
    (answer,) = read_answers(sock, 1)
    assert answer.split(b" ")[1] == str(status).encode(), answer[:80]


def test_faults_and_api_keys_are_judged_by_aiohttps_middlewares(
    start_server: Callable[..., RunningServer],
    connect: Callable[[RunningServer], socket.socket],
) -> None:
    server = start_server(api_key="k3y", hold=0.1)
    sock = connect(server)
    sock.sendall(get(f"{E}/job-take/w1"))
    assert read_answers(sock, 1)[0].startswith(b"HTTP/1.1 401 ")
    keyed = f"GET {E}/job-take/w1 HTTP/1.1\r\nHost: q\r\nAuthorization: Bearer k3y\r\n\r\n"
    sock.sendall(keyed.encode())
    assert read_answers(sock, 1)[0].startswith(b"HTTP/1.1 204 ")

    auth = {"Authorization": "k3y"}
    httpx.put(f"{server.base_url}/_bench/faults", json={"faults": ["job-take:503:1"]}, headers=auth)
    sock.sendall(keyed.encode())
    assert read_answers(sock, 1)[0].startswith(b"HTTP/1.1 503 ")
    events = httpx.get(f"{server.base_url}/_bench/events", headers=auth).json()["events"]
    assert [e["ev"] for e in events if e["ev"] == "fault"] == ["fault"]


def test_a_request_in_pieces_and_a_long_poll_past_the_idle_timeout(
    start_server: Callable[..., RunningServer],
    connect: Callable[[RunningServer], socket.socket],
) -> None:
    server = start_server(hold=1.0, idle_timeout=0.3, take_latency=0.0)
    sock = connect(server)
    started = time.monotonic()
    sock.sendall(get(f"{E}/job-take/w1"))  # waits out the hold, longer than the idle timeout
    assert read_answers(sock, 1)[0].startswith(b"HTTP/1.1 204 ")
    assert time.monotonic() - started >= 0.9
    httpx.post(f"{server.base_url}/_bench/burst", json={"count": 1})
    whole = get(f"{E}/job-take/w1")
    for piece in (whole[:10], whole[10:30], whole[30:]):
        sock.sendall(piece)
        time.sleep(0.05)
    (answer,) = read_answers(sock, 1)
    assert json.loads(shape(answer)[2])["id"] == "job-1"
    time.sleep(0.5)  # idle now: the idle timeout closes it
    sock.settimeout(1)
    assert sock.recv(100) == b""


def test_framing_waits_for_whole_requests_and_leaves_the_unusual_to_aiohttp() -> None:
    whole = post(f"{E}/job-done/w1/job-1?a=1", {"output": 1})
    for cut in (5, 40, len(whole) - 1):
        assert frame(bytearray(whole[:cut])) is None
    framed = frame(bytearray(whole + get("/x")))
    assert framed is not None and framed.size == len(whole)
    assert (framed.method, framed.path, framed.query) == ("POST", f"{E}/job-done/w1/job-1", "a=1")
    assert json.loads(framed.body) == {"output": 1}
    for unusual in (
        b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n",
        b"GET /x HTTP/1.0\r\n\r\n",
        b"GET /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"GET /x HTTP/1.1\r\nno colon\r\n\r\n",
        b"\x16\x03\x01\x02\x00",  # TLS: refused at once, not waited on
        b"get /x",
    ):
        with pytest.raises(Unframeable):
            frame(bytearray(unusual))
