"""Client-facing routes (RunPod's endpoint API), validation, auth, rate limits and faults, over
real HTTP on a loopback port-0 server."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from fake_queue.http.server import RunningServer

E = "/v2/local"
FORM = {"Content-Type": "application/x-www-form-urlencoded", "charset": "utf-8"}


def events(http: httpx.Client, ev: str | None = None, **match: Any) -> list[dict[str, Any]]:
    page = http.get("/_bench/events", params={"cursor": 0}).json()
    return [
        e
        for e in page["events"]
        if (ev is None or e["ev"] == ev) and all(e.get(k) == v for k, v in match.items())
    ]


def run(http: httpx.Client, payload: Any = None, **extra: Any) -> str:
    r = http.post(f"{E}/run", json={"input": payload or {"x": 1}, **extra})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "IN_QUEUE" and set(body) == {"id", "status"}
    return str(body["id"])


def take(http: httpx.Client, worker: str = "w") -> dict[str, Any]:
    r = http.get(f"{E}/job-take/{worker}")
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def done(http: httpx.Client, worker: str, job_id: str, body: Any) -> httpx.Response:
    return http.post(
        f"{E}/job-done/{worker}/{job_id}", content=json.dumps(body).encode(), headers=FORM
    )


def status(http: httpx.Client, job_id: str) -> dict[str, Any]:
    r = http.get(f"{E}/status/{job_id}")
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def assert_json_error(r: httpx.Response, code: int) -> dict[str, Any]:
    assert r.status_code == code, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert isinstance(body["error"], str) and body["error"]
    return body  # type: ignore[no-any-return]


# ---- run / status / runsync ---------------------------------------------------------------------


def test_run_then_status_in_queue(client: httpx.Client) -> None:
    job_id = run(client, {"prompt": "a"})
    assert status(client, job_id) == {"id": job_id, "status": "IN_QUEUE"}
    r = client.post(f"{E}/status/{job_id}")  # the SDK also POSTs /status
    assert r.status_code == 200 and r.json()["status"] == "IN_QUEUE"


def test_status_fields_and_ms_units_come_from_the_event_log(client: httpx.Client) -> None:
    job_id = run(client)
    job = take(client, "w7")
    assert status(client, job_id)["status"] == "IN_PROGRESS"
    in_progress = status(client, job_id)
    assert in_progress["workerId"] == "w7" and "executionTime" not in in_progress
    time.sleep(0.02)  # some execution time; only the event log is asserted on
    assert done(client, "w7", job["id"], {"output": {"y": 2}}).status_code == 200
    st = status(client, job_id)
    assert set(st) == {"id", "status", "delayTime", "executionTime", "workerId", "output"}
    assert st["status"] == "COMPLETED" and st["output"] == {"y": 2} and st["workerId"] == "w7"
    (sub,) = events(client, "submit", job=job_id)
    (dl,) = events(client, "deliver", job=job_id)
    (dn,) = events(client, "done", job=job_id)
    assert st["delayTime"] == round((dl["t"] - sub["t"]) / 1e6)
    assert st["executionTime"] == round((dn["t"] - dl["t"]) / 1e6)
    assert st["delayTime"] >= 50  # at least the 50 ms take latency, in ms not s or ns
    assert st["delayTime"] < 10_000
    assert 20 <= st["executionTime"] < 10_000


def test_runsync_returns_the_completed_job(client: httpx.Client, server: RunningServer) -> None:
    def worker() -> None:
        with httpx.Client(base_url=server.base_url, timeout=10) as own:
            job = take(own, "sync-worker")
            done(own, "sync-worker", job["id"], {"output": job["input"]["n"] * 2})

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    r = client.post(f"{E}/runsync?wait=5000", json={"input": {"n": 21}})
    thread.join(10)
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "COMPLETED" and body["output"] == 42
    assert body["workerId"] == "sync-worker"
    assert isinstance(body["delayTime"], int) and isinstance(body["executionTime"], int)


def test_runsync_returns_a_non_final_status_when_the_wait_runs_out(client: httpx.Client) -> None:
    r = client.post(f"{E}/runsync", params={"wait": 1000}, json={"input": {}})
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "IN_QUEUE" and set(body) == {"id", "status"}
    assert status(client, body["id"])["status"] == "IN_QUEUE"


@pytest.mark.parametrize("wait", ["999", "300001", "0", "soon"])
def test_runsync_rejects_a_bad_wait(client: httpx.Client, wait: str) -> None:
    assert_json_error(client.post(f"{E}/runsync?wait={wait}", json={"input": {}}), 400)
    assert client.get("/_bench/state").json()["counts"]["submitted"] == 0


# ---- stream / cancel / retry / purge / health -----------------------------------------------


def test_stream_returns_chunks_once(client: httpx.Client) -> None:
    job_id = run(client)
    take(client)
    for chunk in (1, 2):
        client.post(
            f"{E}/job-stream/w/{job_id}", content=json.dumps({"output": chunk}), headers=FORM
        )
    assert client.get(f"{E}/stream/{job_id}").json() == {
        "status": "IN_PROGRESS",
        "stream": [{"output": 1}, {"output": 2}],
    }
    assert client.get(f"{E}/stream/{job_id}").json()["stream"] == []


def test_cancel_a_queued_job(start_server: Callable[..., RunningServer]) -> None:
    server = start_server(hold=0.2)
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        job_id = run(http)
        r = http.post(f"{E}/cancel/{job_id}")
        assert r.status_code == 200 and r.json() == {"id": job_id, "status": "CANCELLED"}
        assert status(http, job_id)["status"] == "CANCELLED"
        assert http.get(f"{E}/job-take/w").status_code == 204  # nothing left to take
        assert http.post(f"{E}/cancel/{job_id}").json()["status"] == "CANCELLED"  # idempotent
        assert len(events(http, "done", job=job_id)) == 1


def test_retry_a_failed_job_and_health_counts_it(client: httpx.Client) -> None:
    job_id = run(client)
    take(client)
    done(client, "w", job_id, {"error": "boom"})
    assert status(client, job_id)["status"] == "FAILED"
    r = client.post(f"{E}/retry/{job_id}")
    assert r.status_code == 200 and r.json() == {"id": job_id, "status": "IN_QUEUE"}
    assert take(client, "w2")["id"] == job_id  # same id, taken again
    assert client.get(f"{E}/health").json()["jobs"]["retried"] == 1
    done(client, "w2", job_id, {"output": "ok"})
    assert_json_error(client.post(f"{E}/retry/{job_id}"), 400)  # COMPLETED: not retryable


def test_purge_queue_removes_queued_jobs_only(client: httpx.Client) -> None:
    ids = [run(client) for _ in range(4)]
    take(client)  # ids[0] is in progress
    r = client.post(f"{E}/purge-queue")
    assert r.status_code == 200 and r.json() == {"removed": 3, "status": "completed"}
    assert [status(client, i)["status"] for i in ids] == ["IN_PROGRESS"] + ["CANCELLED"] * 3
    assert client.post(f"{E}/purge-queue").json()["removed"] == 0


def test_health_shape_and_counts(client: httpx.Client) -> None:
    ids = [run(client) for _ in range(4)]
    take(client, "a")
    take(client, "b")
    done(client, "a", ids[0], {"output": 1})
    done(client, "b", ids[1], {"error": "x"})
    take(client, "c")
    assert client.get(f"{E}/health").json() == {
        "jobs": {"completed": 1, "failed": 1, "inProgress": 1, "inQueue": 1, "retried": 0},
        "workers": {"idle": 2, "running": 1},
    }


@pytest.mark.parametrize(
    ("method", "route"),
    [("GET", "status"), ("GET", "stream"), ("POST", "cancel"), ("POST", "retry")],
)
def test_unknown_job_id_is_404(client: httpx.Client, method: str, route: str) -> None:
    assert_json_error(client.request(method, f"{E}/{route}/job-404"), 404)


# ---- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "policy",
    [
        {"executionTimeout": 4999},
        {"executionTimeout": 7 * 24 * 3600 * 1000 + 1},
        {"executionTimeout": "6000"},
        {"executionTimeout": True},
        {"executionTimeout": -1},
        {"ttl": 9999},
        {"ttl": 0},
        {"ttl": 7 * 24 * 3600 * 1000 + 1},
        {"ttl": "x"},
        {"ttl": [10000]},
        [1],
        "fast",
    ],
)
def test_bad_policy_is_400(client: httpx.Client, policy: Any) -> None:
    assert_json_error(client.post(f"{E}/run", json={"input": {}, "policy": policy}), 400)
    assert client.get("/_bench/state").json()["counts"]["submitted"] == 0


@pytest.mark.parametrize(
    "policy",
    [
        {"executionTimeout": 5000},
        {"executionTimeout": 600000.5},
        {"ttl": 10000},
        {"ttl": 7 * 24 * 3600 * 1000, "executionTimeout": 7 * 24 * 3600 * 1000},
        {"lowPriority": True},
        {},
        None,
    ],
)
def test_good_policy_is_accepted(client: httpx.Client, policy: Any) -> None:
    run(client, policy=policy)


def test_status_ttl_query_is_validated(client: httpx.Client) -> None:
    job_id = run(client)
    assert client.get(f"{E}/status/{job_id}?ttl=20000").status_code == 200
    assert_json_error(client.get(f"{E}/status/{job_id}?ttl=5"), 400)
    assert_json_error(client.get(f"{E}/status/{job_id}?ttl=abc"), 400)


def test_run_body_over_10_mb_is_413(client: httpx.Client) -> None:
    big = {"input": {"blob": "x" * 10_000_000}}
    body = assert_json_error(client.post(f"{E}/run", json=big), 413)
    assert "10 MB" in body["error"]
    assert client.get("/_bench/state").json()["counts"]["submitted"] == 0
    just_under = {"input": {"blob": "x" * 9_999_000}}
    assert client.post(f"{E}/run", json=just_under).status_code == 200


@pytest.mark.parametrize(
    "content", [b"", b"{", b"not json", b"[1]", b'{"inputs": 1}', b"null", b"\xff\xfe\x00"]
)
def test_bad_run_body_is_400(client: httpx.Client, content: bytes) -> None:
    for route in ("run", "runsync?wait=1000"):
        assert_json_error(
            client.post(
                f"{E}/{route}", content=content, headers={"Content-Type": "application/json"}
            ),
            400,
        )


def test_other_endpoint_id_is_404(start_server: Callable[..., RunningServer]) -> None:
    server = start_server(endpoint_id="abc123")
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        assert http.get("/v2/abc123/health").status_code == 200
        body = assert_json_error(http.get("/v2/local/health"), 404)
        assert "abc123" in body["error"]
        assert_json_error(http.post("/v2/other/run", json={"input": {}}), 404)
        assert_json_error(http.get("/v2/other/job-take/w"), 404)
        assert_json_error(http.get("/v2/abc123/no-such-route"), 404)
        assert_json_error(http.get("/elsewhere"), 404)


@pytest.mark.parametrize(
    ("method", "route"),
    [
        ("GET", "run"),
        ("GET", "runsync"),
        ("POST", "health"),
        ("GET", "cancel/job-1"),
        ("GET", "purge-queue"),
        ("DELETE", "status/job-1"),
        ("POST", "job-take/w"),
        ("GET", "job-done/w/job-1"),
        ("PUT", "ping/w"),
        ("GET", "retry/job-1"),
    ],
)
def test_wrong_method_is_405(client: httpx.Client, method: str, route: str) -> None:
    assert_json_error(client.request(method, f"{E}/{route}"), 405)


def test_wrong_method_on_bench_routes_is_405(client: httpx.Client) -> None:
    assert_json_error(client.get("/_bench/burst"), 405)
    assert_json_error(client.post("/_bench/state"), 405)


# ---- auth ----------------------------------------------------------------------------------------


@pytest.fixture
def keyed(start_server: Callable[..., RunningServer]) -> RunningServer:
    return start_server(api_key="s3cret", hold=0.2)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", f"{E}/job-take/w", None),
        ("GET", f"{E}/job-take-batch/w?batch_size=2", None),
        ("GET", f"{E}/ping/w", None),
        ("POST", f"{E}/run", {"input": {}}),
        ("GET", f"{E}/health", None),
        ("POST", f"{E}/purge-queue", None),
        ("GET", "/_bench/state", None),
        ("GET", "/_bench/events", None),
        ("POST", "/_bench/burst", {"count": 1}),
    ],
)
def test_api_key_is_required_everywhere(
    keyed: RunningServer, method: str, path: str, body: Any
) -> None:
    with httpx.Client(base_url=keyed.base_url, timeout=10) as http:
        for headers in (
            {},
            {"Authorization": "wrong"},
            {"Authorization": "Bearer wrong"},
            {"Authorization": "Bearers3cret"},
            {"Authorization": "s3cret2"},
        ):
            r = http.request(method, path, json=body, headers=headers)
            assert_json_error(r, 401)
        for auth in ("s3cret", "Bearer s3cret"):
            r = http.request(method, path, json=body, headers={"Authorization": auth})
            assert r.status_code in (200, 204), r.text
        assert keyed.queue.conservation_error() is None


def test_api_key_rejected_requests_change_nothing(keyed: RunningServer) -> None:
    with httpx.Client(base_url=keyed.base_url, timeout=10) as http:
        assert_json_error(http.post(f"{E}/run", json={"input": {}}), 401)
        assert_json_error(http.post("/_bench/burst", json={"count": 3}), 401)
        assert keyed.queue.counts()["submitted"] == 0


# ---- rate limits and faults ----------------------------------------------------------------------


def test_runpod_rate_limits_give_429_on_purge_queue(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(rate_limits="runpod")
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        assert http.post(f"{E}/purge-queue").status_code == 200
        assert http.post(f"{E}/purge-queue").status_code == 200
        body = assert_json_error(http.post(f"{E}/purge-queue"), 429)
        assert "purge-queue" in body["error"]
        for _ in range(5):  # other routes keep their own (much higher) limits
            assert http.get(f"{E}/health").status_code == 200
            assert http.post(f"{E}/run", json={"input": {}}).status_code == 200


def test_rate_limits_are_off_by_default(client: httpx.Client) -> None:
    for _ in range(4):
        assert client.post(f"{E}/purge-queue").status_code == 200


def test_status_fault_returns_that_status(start_server: Callable[..., RunningServer]) -> None:
    server = start_server(faults=["job-done:500:1"])
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        job_id = run(http)
        take(http)
        body = assert_json_error(done(http, "w", job_id, {"output": 1}), 500)
        assert "injected" in body["error"]
        assert status(http, job_id)["status"] == "IN_PROGRESS"  # the fault ate the result
        assert http.get(f"{E}/health").status_code == 200  # other routes unaffected


def test_drop_fault_closes_the_connection(start_server: Callable[..., RunningServer]) -> None:
    server = start_server(faults=["health:drop:1"])
    with httpx.Client(base_url=server.base_url, timeout=5) as http:
        with pytest.raises(httpx.TransportError):
            http.get(f"{E}/health")
        assert http.get("/_bench/state").json()["conservation"] is None  # still serving


def test_drop_fault_on_take_keeps_no_jobs(start_server: Callable[..., RunningServer]) -> None:
    server = start_server(faults=["job-take:drop:1"])
    with httpx.Client(base_url=server.base_url, timeout=5) as http:
        job_id = run(http)
        with pytest.raises(httpx.TransportError):
            http.get(f"{E}/job-take/w")
        assert status(http, job_id)["status"] == "IN_QUEUE"
        r = http.get(f"{E}/job-take-batch/w?batch_size=3")
        assert r.status_code == 200 and [j["id"] for j in r.json()] == [job_id]


def test_delay_fault_delays(start_server: Callable[..., RunningServer]) -> None:
    # the queue's own record: the job is submitted (its `submit` event) only once the delay
    # is over, counted on the queue's clock from a moment before the request was sent
    server = start_server(faults=["run:delay=0.3:1"])
    with httpx.Client(base_url=server.base_url, timeout=5) as http:
        before = http.get("/_bench/state").json()["now_ns"]  # /_bench/* is never delayed
        job_id = run(http)
        (submit,) = events(http, "submit", job=job_id)
        assert submit["t"] - before >= 0.29e9
        assert status(http, job_id)["status"] == "IN_QUEUE"


def test_wildcard_fault_spares_the_bench_control_routes(
    start_server: Callable[..., RunningServer],
) -> None:
    """BUG (app.py fault_middleware / FaultInjector.pick): a `*` rule matches every route,
    including /_bench/* (route name ""), so `--fault '*:drop:0.05'` also drops the runner's own
    burst, events and reset calls. `*` should mean the RunPod routes (faults.ROUTES) only."""
    server = start_server(faults=["*:503:1"])
    with httpx.Client(base_url=server.base_url, timeout=5) as http:
        assert_json_error(http.get(f"{E}/health"), 503)  # RunPod routes: faulted
        assert http.post("/_bench/burst", json={"count": 1}).status_code == 200
        assert http.get("/_bench/events").status_code == 200
        assert http.get("/_bench/state").status_code == 200
