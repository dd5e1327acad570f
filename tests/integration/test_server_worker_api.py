"""Worker-facing routes over real HTTP (loopback, port 0): job-take, job-take-batch, job-done,
job-stream, job-stop and ping, as the runpod SDK 1.12.0 worker calls them."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from fake_queue.http.server import RunningServer
from jobbench.clients.bench_client import BenchClient
from jobbench.errors import RunFailed

E = "/v2/local"
SDK_FORM_HEADERS = {"Content-Type": "application/x-www-form-urlencoded", "charset": "utf-8"}


def burst(http: httpx.Client, count: int, payload: Any = None) -> list[str]:
    body: dict[str, Any] = {"count": count}
    if payload is not None:
        body["input"] = payload
    r = http.post("/_bench/burst", json=body)
    assert r.status_code == 200, r.text
    first = int(r.json()["first"].removeprefix("job-"))
    return [f"job-{first + i}" for i in range(count)]


def events(http: httpx.Client, ev: str | None = None, **match: Any) -> list[dict[str, Any]]:
    out, cursor = [], 0
    while True:
        page = http.get("/_bench/events", params={"cursor": cursor}).json()
        out += page["events"]
        if page["next"] == cursor or not page["events"]:
            break
        cursor = page["next"]
    return [
        e
        for e in out
        if (ev is None or e["ev"] == ev) and all(e.get(k) == v for k, v in match.items())
    ]


def post_done(
    http: httpx.Client, worker: str, job_id: str, body: Any, route: str = "job-done"
) -> httpx.Response:
    """Post like the SDK: JSON text (ensure_ascii=False) sent as form-urlencoded."""
    text = json.dumps(body, ensure_ascii=False)
    return http.post(
        f"{E}/{route}/{worker}/{job_id}?gpu=cpu",
        content=text.encode("utf-8"),
        headers=SDK_FORM_HEADERS,
    )


def take_one(http: httpx.Client, worker: str) -> dict[str, Any]:
    r = http.get(f"{E}/job-take/{worker}", params={"gpu": "cpu"})
    assert r.status_code == 200, r.text
    job = r.json()
    assert isinstance(job, dict)
    return job


def state(http: httpx.Client) -> dict[str, Any]:
    return http.get("/_bench/state").json()  # type: ignore[no-any-return]


def in_thread(fn: Callable[[], Any]) -> Callable[[], Any]:
    """Run fn in a thread now; the returned callable joins and gives its result (or raises)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the test thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def join() -> Any:
        thread.join(15)
        assert not thread.is_alive(), "background request did not finish"
        if "error" in box:
            raise box["error"]
        return box["value"]

    return join


def wait_for_waiting_takes(http: httpx.Client, n: int) -> None:
    for _ in range(500):
        if state(http)["waiting_takes"] >= n:
            return
        threading.Event().wait(0.005)
    raise AssertionError(f"{n} takes never started waiting")


def test_the_state_marks_where_the_event_log_ended_at_its_counts(client: httpx.Client) -> None:
    """A rep cut short reads the counts, then the log up to this mark: the two describe one
    moment while workers go on finishing jobs."""
    ids = burst(client, 3)
    taken = [take_one(client, "w1")["id"] for _ in range(2)]
    assert taken == ids[:2]
    post_done(client, "w1", ids[0], {"output": 1})
    marked = state(client)
    assert marked["events_next"] == len(events(client)) > 0
    post_done(client, "w1", ids[1], {"output": 2})  # after the snapshot: beyond its mark
    assert len(events(client)) > marked["events_next"]
    assert marked["counts"]["completed"] == 1


# ---- job-take ---------------------------------------------------------------------------------


def test_job_take_returns_one_object_after_the_take_latency(client: httpx.Client) -> None:
    ids = burst(client, 2, {"prompt": "hi"})
    r = client.get(f"{E}/job-take/w1?gpu=cpu")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")
    assert r.json() == {"id": ids[0], "input": {"prompt": "hi"}}
    (take,) = events(client, "take", worker="w1")
    assert take["kind"] == "queued" and take["asked"] == 1 and take["got"] == 1
    assert take["due"] - take["arrived"] == 50_000_000  # take_latency 0.05 s, fixed
    assert take["t"] >= take["due"]
    assert take["t"] - take["due"] < 1_000_000_000  # answered on time, loosely
    (claim,) = events(client, "claim", job=ids[0])
    assert claim["t"] == take["arrived"] and claim["worker"] == "w1"
    (deliver,) = events(client, "deliver", job=ids[0])
    assert deliver["take"] == take["take"] == claim["take"]
    assert state(client)["counts"]["in_progress"] == 1


def test_a_take_counts_its_latency_from_when_its_bytes_arrived(
    start_server: Callable[..., RunningServer],
) -> None:
    # A take pipelined behind a 0.3 s job-stop poll on one connection reaches its handler only
    # once the poll is answered; its 50 ms run from its arrival, so it is due before then.
    server = start_server(hold=0.3)
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        burst(http, 1)
        head = f"Host: 127.0.0.1:{server.settings.port}\r\n\r\n"
        requests = f"GET {E}/job-stop/w1 HTTP/1.1\r\n{head}GET {E}/job-take/w1 HTTP/1.1\r\n{head}"
        with socket.create_connection(("127.0.0.1", server.settings.port), timeout=5) as sock:
            sock.sendall(requests.encode())
            answers = b""
            while answers.count(b"HTTP/1.1 ") < 2 or not answers.endswith(b"}"):
                answers += sock.recv(65536)
        assert answers.startswith(b"HTTP/1.1 204") and b"HTTP/1.1 200" in answers
        (take,) = events(http, "take", worker="w1")
        assert take["due"] - take["arrived"] == 50_000_000
        # answered after the poll's hold, well past its due time: the arrival was stamped when
        # its bytes came in, not when its handler ran (then it would be answered at `due`)
        assert take["t"] - take["due"] >= 200_000_000


def test_a_job_cancelled_while_its_take_waits_is_not_in_the_answer(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(take_latency=0.3)
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        ids = burst(http, 3)
        answer = in_thread(lambda: http.get(f"{E}/job-take-batch/w1", params={"batch_size": 3}))
        while len(events(http, "claim")) < 3:  # claimed at once; answered 0.3 s later
            time.sleep(0.005)
        assert http.post(f"{E}/cancel/{ids[1]}").status_code == 200
        r = answer()
        assert r.status_code == 200
        assert [job["id"] for job in r.json()] == [ids[0], ids[2]]
        assert state(http)["counts"]["cancelled"] == 1


def test_a_delay_fault_on_job_take_comes_before_the_take_latency(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(take_latency=0.1, faults=["job-take:delay=0.2:1"])
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        burst(http, 1)
        before = state(http)["now_ns"]  # the queue's clock; /_bench/* is never delayed
        r = http.get(f"{E}/job-take/w1")
        assert r.status_code == 200
        (take,) = events(http, "take", worker="w1")
        assert take["arrived"] - before >= 0.19e9  # reached the queue after the delay ...
        assert take["due"] - take["arrived"] == 100_000_000  # ... then the take latency
        assert take["t"] >= take["due"]


def test_job_take_batch_is_a_list_never_longer_than_batch_size(client: httpx.Client) -> None:
    ids = burst(client, 7)
    got: list[list[str]] = []
    for _ in range(3):
        r = client.get(f"{E}/job-take-batch/w1", params={"batch_size": 3, "job_in_progress": 0})
        assert r.status_code == 200
        batch = r.json()
        assert isinstance(batch, list) and 1 <= len(batch) <= 3
        assert all(set(job) == {"id", "input"} for job in batch)
        got.append([job["id"] for job in batch])
    assert got == [ids[0:3], ids[3:6], ids[6:7]]  # FIFO
    takes = events(client, "take", worker="w1")
    assert [(t["asked"], t["got"]) for t in takes] == [(3, 3), (3, 3), (3, 1)]


def test_job_take_batch_size_one_and_default(client: httpx.Client) -> None:
    burst(client, 3)
    r = client.get(f"{E}/job-take-batch/w1")
    assert r.status_code == 200 and len(r.json()) == 1
    r = client.get(f"{E}/job-take-batch/w1?batch_size=1")
    assert r.status_code == 200 and len(r.json()) == 1


@pytest.mark.parametrize("flag", ["0", "1"])
def test_job_in_progress_is_recorded_in_the_take_event(client: httpx.Client, flag: str) -> None:
    burst(client, 1)
    r = client.get(f"{E}/job-take-batch/w1?batch_size=2&job_in_progress={flag}")
    assert r.status_code == 200
    (take,) = events(client, "take")
    assert take["in_progress"] is (flag == "1")


@pytest.mark.parametrize(
    "query", ["batch_size=0", "batch_size=-3", "batch_size=abc", "batch_size=10001"]
)
def test_job_take_batch_rejects_a_bad_batch_size(client: httpx.Client, query: str) -> None:
    burst(client, 1)
    r = client.get(f"{E}/job-take-batch/w1?{query}")
    assert r.status_code == 400
    assert "batch_size" in r.json()["error"]
    assert state(client)["counts"]["in_queue"] == 1  # nothing was claimed


def test_extra_job_keys_reach_the_worker(client: httpx.Client) -> None:
    r = client.post(
        f"{E}/run",
        json={"input": {"a": 1}, "webhook": "http://hook", "s3Config": {"bucketName": "b"}},
    )
    job_id = r.json()["id"]
    assert take_one(client, "w") == {
        "id": job_id,
        "input": {"a": 1},
        "webhook": "http://hook",
        "s3Config": {"bucketName": "b"},
    }


def test_a_waiting_take_is_woken_by_a_burst(client: httpx.Client, server: RunningServer) -> None:
    def take() -> httpx.Response:
        with httpx.Client(base_url=server.base_url, timeout=10) as own:
            return own.get(f"{E}/job-take-batch/sleeper?batch_size=4")

    join = in_thread(take)
    wait_for_waiting_takes(client, 1)
    ids = burst(client, 6)
    r = join()
    assert r.status_code == 200
    assert [job["id"] for job in r.json()] == ids[:4]
    (ev,) = events(client, "take", worker="sleeper")
    (sub,) = events(client, "submit", job=ids[0])
    assert ev["kind"] == "woken" and ev["got"] == 4
    assert ev["due"] == sub["t"] + 5_000_000  # wake_latency 0.005 s after the arrival
    assert ev["arrived"] < sub["t"] <= ev["t"]
    assert state(client)["counts"]["in_queue"] == 2


def test_an_empty_take_is_answered_204_after_the_hold(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(hold=0.3)
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        r = http.get(f"{E}/job-take/idle")
        assert r.status_code == 204 and r.content == b""
        r = http.get(f"{E}/job-take-batch/idle?batch_size=5")
        assert r.status_code == 204
        takes = events(http, "take", worker="idle")
        assert [t["kind"] for t in takes] == ["empty", "empty"]
        assert all(t["got"] == 0 for t in takes)
        for t in takes:  # held for the whole `hold` (the queue's record; no upper bound)
            assert t["due"] - t["arrived"] >= 0.29e9 and t["t"] >= t["due"]
        assert state(http)["waiting_takes"] == 0


# ---- job-done / job-stream ------------------------------------------------------------------


def test_job_done_with_a_form_urlencoded_json_body_completes(client: httpx.Client) -> None:
    burst(client, 1)
    job = take_one(client, "w")
    output = {"text": "héllo ✓", "n": [1, 2]}
    r = post_done(client, "w", job["id"], {"output": output})
    assert r.status_code == 200
    assert r.json() == {"ok": True, "recorded": "done"}
    status = client.get(f"{E}/status/{job['id']}").json()
    assert status["status"] == "COMPLETED" and status["output"] == output
    (done,) = events(client, "done", job=job["id"])
    assert done["status"] == "COMPLETED" and done["worker"] == "w"


def test_progress_update_is_not_completion(client: httpx.Client) -> None:
    burst(client, 1)
    job = take_one(client, "w")
    r = post_done(client, "w", job["id"], {"status": "IN_PROGRESS", "output": "50%"})
    assert r.status_code == 200 and r.json()["recorded"] == "progress"
    assert client.get(f"{E}/status/{job['id']}").json()["status"] == "IN_PROGRESS"
    assert events(client, "progress", job=job["id"])
    assert not events(client, "done")
    assert post_done(client, "w", job["id"], {"output": 1}).json()["recorded"] == "done"
    assert client.get(f"{E}/status/{job['id']}").json()["status"] == "COMPLETED"


def test_handler_error_body_fails_the_job(client: httpx.Client) -> None:
    burst(client, 1)
    job = take_one(client, "w")
    err = json.dumps({"error_type": "ValueError", "error_message": "bad"})
    assert post_done(client, "w", job["id"], {"error": err}).status_code == 200
    status = client.get(f"{E}/status/{job['id']}").json()
    assert status["status"] == "FAILED" and status["error"] == err
    assert "output" not in status


def test_job_done_for_unknown_job_or_other_worker_is_404(client: httpx.Client) -> None:
    burst(client, 1)
    job = take_one(client, "w")
    for worker, job_id in (("w", "job-999"), ("other", job["id"])):
        r = post_done(client, worker, job_id, {"output": 1})
        assert r.status_code == 404
        assert "error" in r.json()
        r = post_done(client, worker, job_id, {"output": 1}, route="job-stream")
        assert r.status_code == 404
    assert client.get(f"{E}/status/{job['id']}").json()["status"] == "IN_PROGRESS"


def test_job_done_for_a_terminal_job_is_ignored(client: httpx.Client) -> None:
    burst(client, 1)
    job = take_one(client, "w")
    assert client.post(f"{E}/cancel/{job['id']}").json()["status"] == "CANCELLED"
    r = post_done(client, "w", job["id"], {"output": "late"})
    assert r.status_code == 200 and r.json()["recorded"] == "ignored"
    r = post_done(client, "w", job["id"], {"output": "chunk"}, route="job-stream")
    assert r.status_code == 200 and r.json()["recorded"] == "ignored"
    assert client.get(f"{E}/status/{job['id']}").json()["status"] == "CANCELLED"
    assert [e["status"] for e in events(client, "ignored", job=job["id"])] == ["CANCELLED"] * 2


@pytest.mark.parametrize("body", [b"", b"not json", b"[1, 2]", b'"output"', b"\xff\xfe"])
def test_job_done_with_a_bad_body_is_400(client: httpx.Client, body: bytes) -> None:
    burst(client, 1)
    job = take_one(client, "w")
    r = client.post(f"{E}/job-done/w/{job['id']}", content=body, headers=SDK_FORM_HEADERS)
    assert r.status_code == 400 and "error" in r.json()
    assert client.get(f"{E}/status/{job['id']}").json()["status"] == "IN_PROGRESS"


def test_job_stream_chunks_reach_the_stream_route(client: httpx.Client) -> None:
    burst(client, 1)
    job = take_one(client, "w")
    for chunk in ("a", {"b": 2}, None):
        r = post_done(client, "w", job["id"], {"output": chunk}, route="job-stream")
        assert r.status_code == 200 and r.json()["recorded"] == "stream"
    r = client.get(f"{E}/stream/{job['id']}")
    assert r.json() == {
        "status": "IN_PROGRESS",
        "stream": [{"output": "a"}, {"output": {"b": 2}}, {"output": None}],
    }
    assert client.get(f"{E}/stream/{job['id']}").json()["stream"] == []  # drained
    post_done(client, "w", job["id"], {"output": [], "isStream": True})
    assert client.get(f"{E}/stream/{job['id']}").json() == {"status": "COMPLETED", "stream": []}


# ---- job-stop / ping ---------------------------------------------------------------------------


def test_job_stop_is_204_after_the_hold(start_server: Callable[..., RunningServer]) -> None:
    server = start_server(hold=0.3)
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        r = http.get(f"{E}/job-stop/w")
        assert r.status_code == 204 and r.content == b""
        assert not events(http, "stop")


def test_job_stop_hands_out_a_cancelled_job(client: httpx.Client, server: RunningServer) -> None:
    burst(client, 2)
    first = take_one(client, "w")
    second = take_one(client, "w")

    def poll() -> httpx.Response:
        with httpx.Client(base_url=server.base_url, timeout=10) as own:
            return own.get(f"{E}/job-stop/w")

    join = in_thread(poll)
    assert client.post(f"{E}/cancel/{first['id']}").json() == {
        "id": first["id"],
        "status": "CANCELLED",
    }
    r = join()
    assert r.status_code == 200
    assert r.json() == {"jobsToStop": [first["id"]]}
    (stop,) = events(client, "stop")
    (done,) = events(client, "done", job=first["id"])
    assert stop["job"] == first["id"] and stop["worker"] == "w"
    assert done["reason"] == "cancel"
    assert stop["t"] >= done["t"]
    # the stopped job gets no job-done; the other job is unaffected
    assert client.get(f"{E}/status/{second['id']}").json()["status"] == "IN_PROGRESS"
    assert client.get("/_bench/workers").json()["w"]["held"] == 1


def test_job_stop_returns_stops_signalled_before_the_poll(client: httpx.Client) -> None:
    burst(client, 1)
    job = take_one(client, "w")
    client.post(f"{E}/cancel/{job['id']}")
    r = client.get(f"{E}/job-stop/w")
    assert r.status_code == 200 and r.json() == {"jobsToStop": [job["id"]]}
    r = client.get(f"{E}/job-stop/other")  # another worker has nothing to stop
    assert r.status_code == 204


def test_ping_marks_the_worker_in_health(client: httpx.Client) -> None:
    assert client.get(f"{E}/health").json()["workers"] == {"idle": 0, "running": 0}
    r = client.get(f"{E}/ping/pinger", params={"gpu": "cpu", "runpod_version": "1.12.0"})
    assert r.status_code == 200
    assert client.get(f"{E}/health").json()["workers"] == {"idle": 1, "running": 0}
    burst(client, 1)
    take_one(client, "taker")
    assert client.get(f"{E}/health").json()["workers"] == {"idle": 1, "running": 1}
    assert client.get("/_bench/workers").json()["pinger"]["held"] == 0


def test_take_done_cycle_keeps_conservation(client: httpx.Client) -> None:
    burst(client, 5)
    for _ in range(5):
        job = take_one(client, "w")
        assert post_done(client, "w", job["id"], {"output": job["id"]}).status_code == 200
    st = state(client)
    assert st["conservation"] is None
    assert st["counts"]["completed"] == 5 and st["counts"]["submitted"] == 5
    delivers = events(client, "deliver")
    assert sorted(e["job"] for e in delivers) == sorted({e["job"] for e in delivers})


def test_a_late_burst_records_each_jobs_intended_time(client: httpx.Client) -> None:
    body = {"count": 3, "input": {}, "late_s": [0.002, 0.002, 0]}  # an open-loop driver's
    assert client.post("/_bench/burst", json=body).status_code == 200
    submits = events(client, "submit")[-3:]
    assert [e["t"] - e.get("intended", e["t"]) for e in submits] == [2_000_000, 2_000_000, 0]
    assert [e["job"] for e in submits] == sorted(e["job"] for e in submits)  # in order
    for bad in (-1, [0.1], "late", True):
        r = client.post("/_bench/burst", json={"count": 2, "input": {}, "late_s": bad})
        assert r.status_code == 400 and "late_s" in r.text


def test_intended_times_on_the_queues_clock_and_pipelined_submissions(
    server: RunningServer, client: httpx.Client
) -> None:
    # The driver reads the queue's clock (a real server: the same monotonic clock, so the
    # offset is about 0 and its bound half a loopback round trip), then sends three
    # submissions back to back on one connection without waiting for an answer: each is
    # taken, in order, and its jobs carry the intended time they were sent with.
    bench = BenchClient(server.base_url)
    offset, error = bench.clock_offset_ns()
    assert abs(offset) <= error + 1_000_000 and 0 <= error < 50_000_000
    poster = bench.pipelined("/burst")
    start = time.monotonic_ns() + offset
    intended = [start - 30_000_000, start - 20_000_000, start - 10_000_000]  # 30, 20, 10 ms ago
    for at in intended:
        poster.post({"count": 2, "input": {}, "intended_ns": at})
    poster.close(timeout_s=5.0)
    assert poster.error is None and poster.answered == poster.sent == 3
    submits = events(client, "submit")[-6:]
    assert [e["intended"] for e in submits] == [t for t in intended for _ in range(2)]
    assert all(e["t"] >= e["intended"] for e in submits)
    ahead = {"count": 1, "input": {}, "intended_ns": time.monotonic_ns() + offset + 10**8}
    assert client.post("/_bench/burst", json=ahead).status_code == 200  # not yet due: now
    assert "intended" not in events(client, "submit")[-1]
    # Two hours before now is out of range however long the machine has been up; 0 is not: on
    # a machine booted under an hour ago, the monotonic clock's 0 lies within the last hour.
    two_hours_ago = time.monotonic_ns() + offset - 2 * 3600 * 10**9
    for bad in (1.5, [1, 2], "soon", two_hours_ago):
        r = client.post("/_bench/burst", json={"count": 1, "input": {}, "intended_ns": bad})
        assert r.status_code == 400 and "intended_ns" in r.text
    bench.close()


def test_a_refused_pipelined_submission_is_kept_as_the_posters_error(
    server: RunningServer,
) -> None:
    poster = BenchClient(server.base_url).pipelined("/burst")
    poster.post({"count": 0, "input": {}})  # no job: 400
    poster.close(timeout_s=5.0)
    assert poster.error is not None and "answered 400" in poster.error
    with pytest.raises(RunFailed, match="answered 400"):
        poster.post({"count": 1, "input": {}})
