"""Fuzz a live server with random methods, routes, queries and bodies (hypothesis, bounded).

Every answer must be well-formed: never a 5xx, a JSON body with an "error" key for every status
>= 400, an empty body for 204, JSON for 200; afterwards the server still answers and its
bookkeeping (/_bench/state conservation) holds. The targeted tests at the end pin down each
500 the fuzzing found, one by one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_queue.http.server import RunningServer
from fake_queue.queue.faults import ROUTES

E = "/v2/local"
FUZZ_SETTINGS = {"take_latency": 0.01, "wake_latency": 0.001, "hold": 0.05}
FUZZ_LATENCY = {"take": 0.01, "wake": 0.001, "hold": 0.05, "done": 0}
HYPOTHESIS = settings(
    max_examples=100,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# ---- strategies ---------------------------------------------------------------------------------


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
policy_values = st.one_of(
    st.integers(-10, 10**9),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
)
policies = st.one_of(
    st.dictionaries(
        st.sampled_from(["executionTimeout", "ttl", "lowPriority", "x"]), policy_values, max_size=3
    ),
    json_values,
)
api_bodies = st.fixed_dictionaries(
    {},
    optional={
        "input": json_values,
        "policy": policies,
        "webhook": json_values,
        "s3Config": json_values,
        "output": json_values,
        "error": json_values,
        "status": st.sampled_from(["IN_PROGRESS", "COMPLETED", "FAILED", 3]),
        "isStream": st.booleans(),
        "stopPod": st.booleans(),
    },
)
submit_bodies = st.one_of(
    st.fixed_dictionaries({"input": json_values}),
    st.fixed_dictionaries(
        {"input": json_values},
        optional={"policy": policies, "webhook": json_values, "s3Config": json_values},
    ),
)
result_bodies = st.fixed_dictionaries(
    {},
    optional={
        "output": json_values,
        "error": json_values,
        "isStream": st.booleans(),
        "status": st.sampled_from(["IN_PROGRESS", "COMPLETED", "FAILED", 3]),
    },
)
V2_BODIES = {
    "run": submit_bodies,
    "runsync": submit_bodies,
    "job-done": result_bodies,
    "job-stream": result_bodies,
}
raw_bodies = st.one_of(
    st.none(),
    st.binary(max_size=120),
    json_values.map(lambda v: json.dumps(v).encode()),
    api_bodies.map(lambda v: json.dumps(v, ensure_ascii=False).encode()),
    api_bodies.map(lambda v: json.dumps(v).encode()),
)
segments = st.one_of(
    st.sampled_from(["w", "bg", "job-1", "job-2", "job-3", "job-4", "job-99"]),
    st.text(min_size=1, max_size=10),
)
query_values = st.one_of(
    st.integers(-5, 400_000).map(str),
    st.text(max_size=8),
    st.sampled_from(["0", "1", "1000", "abc", ""]),
)
queries = st.dictionaries(
    st.sampled_from(
        ["batch_size", "job_in_progress", "wait", "ttl", "gpu", "cursor", "limit", "x"]
    ),
    query_values,
    max_size=3,
)
content_types = st.sampled_from(
    [None, "application/json", "application/x-www-form-urlencoded", "text/plain"]
)
ARITY = {
    "status": 1,
    "stream": 1,
    "cancel": 1,
    "retry": 1,
    "job-take": 1,
    "job-take-batch": 1,
    "job-stop": 1,
    "ping": 1,
    "job-done": 2,
    "job-stream": 2,
}
PROPER_METHOD = {
    "run": "POST",
    "runsync": "POST",
    "cancel": "POST",
    "retry": "POST",
    "purge-queue": "POST",
    "job-done": "POST",
    "job-stream": "POST",
    "burst": "POST",
    "reset": "POST",
}
methods = st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"])


@st.composite
def v2_requests(draw: st.DrawFn) -> dict[str, Any]:
    endpoint = draw(st.sampled_from(["local"] * 7 + ["other"]))
    route = draw(st.sampled_from([*ROUTES, "job-take-batch", "", "nope"]))
    arity = ARITY.get(route, 0)
    extra = draw(
        st.one_of(
            st.lists(segments, min_size=arity, max_size=arity),
            st.lists(segments, min_size=arity, max_size=arity),
            st.lists(segments, max_size=3),
        )
    )
    path = "/".join(quote(p, safe="") for p in [route, *extra])
    query = draw(queries)
    if route == "runsync":
        query["wait"] = draw(st.sampled_from(["1000", "999", "abc"]))  # keep waits short
    method = draw(st.one_of(st.just(PROPER_METHOD.get(route, "GET")), methods))
    shaped = V2_BODIES.get(route, api_bodies)
    body = draw(raw_bodies if draw(st.integers(0, 9)) < 3 else shaped.map(_dumps))
    return {
        "method": method,
        "path": f"/v2/{endpoint}/{path}",
        "query": query,
        "body": body,
        "content_type": draw(content_types),
    }


latency_specs = st.one_of(
    st.floats(0, 0.05),
    st.integers(0, 0),
    st.text(max_size=10),
    st.booleans(),
    st.none(),
    st.sampled_from(
        [
            "uniform:0,0.01",
            "normal:0.01,0.001",
            "lognormal:-5,0.1",
            "0.02",
            "uniform:0.02,0.01",
            "samples:/nonexistent",
            "fixed",
            "uniform:1",
        ]
    ),
    st.fixed_dictionaries(
        {"kind": st.sampled_from(["fixed", "uniform", "normal", "lognormal", "samples", "bogus"])},
        optional={
            "a": json_scalars,
            "b": json_scalars,
            "samples": json_values,
            "file": st.text(max_size=5),
        },
    ),
)
# counts stay small: a huge count with "inputs" stalls the server (see the targeted test)
burst_bodies = st.fixed_dictionaries(
    {},
    optional={
        "count": st.one_of(
            st.integers(-3, 40),
            st.floats(-3, 40),
            st.none(),
            st.booleans(),
            st.text(max_size=4),
            st.lists(st.integers(0, 3), max_size=2),
        ),
        "input": json_values,
        "inputs": st.one_of(st.lists(json_values, max_size=4), json_values),
    },
)
latency_bodies = st.dictionaries(
    st.sampled_from(["take", "wake", "hold", "done", "take_latency", "hold_latency", "queue"]),
    latency_specs,
    max_size=3,
)
ROUTE_BODIES = {"burst": burst_bodies, "latency": latency_bodies}


@st.composite
def bench_requests(draw: st.DrawFn) -> dict[str, Any]:
    route = draw(
        st.sampled_from(["burst", "reset", "events", "state", "workers", "latency", "nope", ""])
    )
    shaped = ROUTE_BODIES.get(route, json_values)
    body = draw(
        st.one_of(
            st.none(),
            st.binary(max_size=60),
            json_values.map(_dumps),
            shaped.map(_dumps),
            shaped.map(_dumps),
            shaped.map(_dumps),
        )
    )
    proper = "PUT" if route == "latency" else PROPER_METHOD.get(route, "GET")
    method = draw(st.one_of(st.just(proper), st.just(proper), methods))
    return {
        "method": method,
        "path": f"/_bench/{route}",
        "query": draw(queries),
        "body": body,
        "content_type": draw(content_types),
    }


# ---- helpers ------------------------------------------------------------------------------------


def check_answer(r: httpx.Response, method: str) -> None:
    where = f"{method} {r.request.url} -> {r.status_code} {r.text[:200]!r}"
    assert r.status_code < 500, where
    if method == "HEAD":
        return
    if r.status_code == 204:
        assert r.content == b"", where
        return
    assert r.headers.get("content-type", "").startswith("application/json"), where
    body = r.json()
    if r.status_code >= 400:
        assert isinstance(body, dict) and isinstance(body.get("error"), str), where


def send(http: httpx.Client, req: dict[str, Any]) -> httpx.Response:
    headers = {"Content-Type": req["content_type"]} if req["content_type"] else {}
    return http.request(
        req["method"], req["path"], params=req["query"], content=req["body"], headers=headers
    )


def assert_still_healthy(http: httpx.Client) -> None:
    health = http.get(f"{E}/health")
    assert health.status_code == 200 and set(health.json()) == {"jobs", "workers"}
    assert http.get("/_bench/state").json()["conservation"] is None


@pytest.fixture
def fuzz_server(start_server: Callable[..., RunningServer]) -> Iterator[RunningServer]:
    """A fast server with a background worker that takes and completes jobs, so /runsync
    finishes quickly and fuzzed job ids have real jobs behind them."""
    server = start_server(**FUZZ_SETTINGS)
    stop = threading.Event()

    def worker() -> None:
        with httpx.Client(base_url=server.base_url, timeout=5) as http:
            while not stop.is_set():
                try:
                    r = http.get(f"{E}/job-take-batch/bg?batch_size=4&job_in_progress=0")
                    if r.status_code != 200:
                        continue
                    for job in r.json():
                        http.post(
                            f"{E}/job-done/bg/{job['id']}",
                            content=json.dumps({"output": job["input"]}),
                            headers={"Content-Type": "application/x-www-form-urlencoded"},
                        )
                except httpx.HTTPError:
                    stop.wait(0.01)

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    yield server
    stop.set()
    thread.join(5)


# ---- fuzz ---------------------------------------------------------------------------------------


def test_fuzz_worker_and_client_routes(fuzz_server: RunningServer) -> None:
    with httpx.Client(base_url=fuzz_server.base_url, timeout=10) as http:
        for i in range(3):  # real jobs for the fuzzed ids to hit
            http.post(f"{E}/run", json={"input": {"seed": i}})

        @settings(HYPOTHESIS, max_examples=300)
        @given(req=v2_requests())
        def check(req: dict[str, Any]) -> None:
            check_answer(send(http, req), req["method"])

        check()
        assert_still_healthy(http)


def test_fuzz_bench_routes(start_server: Callable[..., RunningServer]) -> None:
    server = start_server(**FUZZ_SETTINGS)
    with httpx.Client(base_url=server.base_url, timeout=10) as http:

        @settings(HYPOTHESIS, max_examples=200)
        @given(req=bench_requests())
        def check(req: dict[str, Any]) -> None:
            http.put("/_bench/latency", json=FUZZ_LATENCY)  # each example starts the same
            check_answer(send(http, req), req["method"])

        check()
        http.put("/_bench/latency", json=FUZZ_LATENCY)
        assert_still_healthy(http)


# ---- the 500s the fuzzing found, pinned down ---------------------------------------------------


@pytest.mark.parametrize("route", ["run", "job-done/w/job-1", "runsync?wait=1000"])
def test_deeply_nested_json_is_400_not_500(client: httpx.Client, route: str) -> None:
    """BUG: json_body (http_util.py) catches ValueError/UnicodeDecodeError only; json.loads
    raises RecursionError on deep nesting, which escapes as a bare 500."""
    r = client.post(f"{E}/{route}", content=b"[" * 100_000 + b"]" * 100_000)
    check_answer(r, "POST")
    assert r.status_code in (400, 413)
    assert_still_healthy(client)


@pytest.mark.parametrize(
    "body",
    [
        {"inputs": [{}], "count": "x"},
        {"inputs": [{}], "count": None},
        {"inputs": [{}], "count": [2]},
        {"count": 2**62},
        {"count": 2**62, "input": {}},
    ],
)
def test_bench_burst_with_a_bad_count_is_400_not_500(client: httpx.Client, body: Any) -> None:
    """BUG (app.py bench_burst): `int(body.get("count", ...))` lets ValueError/TypeError escape
    (500), and the list of payloads is built before the 1..MAX_BURST check, so a huge count is a
    MemoryError (500), or, with "inputs", a range(count) loop that stalls the server."""
    r = client.post("/_bench/burst", json=body)
    check_answer(r, "POST")
    assert r.status_code == 400
    assert client.get("/_bench/state").json()["counts"]["submitted"] == 0


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "samples"},
        {"kind": "uniform", "a": "x"},
        {"kind": "normal", "a": None, "b": 1},
        {"kind": "samples", "samples": [0.1, "x"]},
        {"kind": "samples", "samples": 3},
    ],
)
def test_bench_latency_with_a_bad_table_is_400_not_500(client: httpx.Client, spec: Any) -> None:
    """BUG (app.py bench_latency + latency.parse_distribution): only LatencySpecError is caught;
    the table form raises KeyError/ValueError/TypeError, which escape as 500."""
    before = client.get("/_bench/latency").json()
    r = client.put("/_bench/latency", json={"take": spec})
    check_answer(r, "PUT")
    assert r.status_code == 400
    assert client.get("/_bench/latency").json() == before


@pytest.mark.parametrize("take", ["uniform:0,inf", "normal:inf,0", 1e300, "lognormal:1000,1"])
def test_bench_latency_rejects_latencies_a_take_cannot_use(client: httpx.Client, take: Any) -> None:
    """BUG: these pass validation, then `int(self.sampler.take() * 1e9)` (job_queue.py take) raises
    OverflowError (or lognormvariate overflows): every take that finds jobs answers 500 and the
    jobs it claimed stay claimed by a take that no longer exists (never delivered again)."""
    r = client.put("/_bench/latency", json={"take": take})
    if r.status_code == 200:  # accepted: show the damage it does
        client.post("/_bench/burst", json={"count": 1})
        take_answer = client.get(f"{E}/job-take/w")
        client.put("/_bench/latency", json={"take": 0.05})
        assert take_answer.status_code < 500, take_answer.text[:200]
    assert r.status_code == 400
