"""The aiohttp application: routes, auth, faults, rate limits and JSON errors. No state logic."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from itertools import groupby
from operator import itemgetter
from typing import Any

from aiohttp import web

from fake_queue.http.client_routes import add_client_routes
from fake_queue.http.http_util import (
    DELAYED_ARRIVAL,
    QUEUE_KEY,
    SETTINGS_KEY,
    error,
    int_query,
    json_body,
)
from fake_queue.http.worker_routes import add_worker_routes
from fake_queue.queue.autoscaled_fleet import Fleet, FleetSettings, FleetSettingsError
from fake_queue.queue.faults import (
    ROUTES,
    RUNPOD_RATE_LIMITS,
    FaultInjector,
    FaultSpecError,
    RateLimiter,
    parse_fault,
)
from fake_queue.queue.job_queue import JobError, JobQueue
from fake_queue.queue.latency import LatencyModel, LatencySampler, LatencySpecError
from fake_queue.queue.watch import worker_view
from fake_queue.settings import BENCH_PREFIX, ServerSettings

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
MAX_BODY_BYTES = 32 * 1024 * 1024
MAX_BURST = 1_000_000
FAULTS_KEY: web.AppKey[FaultInjector] = web.AppKey("faults", FaultInjector)


def _route_name(request: web.Request) -> str:
    name = request.match_info.route.name or ""
    return name.removesuffix("-post")


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except JobError as exc:
        return error(exc.status, exc.message)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return error(exc.status, f"{exc.reason}: {request.method} {request.path}")


def auth_middleware(api_key: str) -> Any:
    accepted = {api_key, f"Bearer {api_key}"}

    @web.middleware
    async def require_key(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.headers.get("Authorization", "").strip() not in accepted:
            return error(401, "missing or wrong API key: send 'Authorization: Bearer KEY'")
        return await handler(request)

    return require_key


@web.middleware
async def inject_faults(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The rules in force (PUT /_bench/faults changes them between scenarios), each injected
    fault noted in the event log with the worker and job it hit."""
    injector = request.app[FAULTS_KEY]
    if not injector.rules:
        return await handler(request)
    route = _route_name(request)
    rule = injector.pick(route)
    if rule is None:
        return await handler(request)
    queue = request.app[QUEUE_KEY]
    info = request.match_info
    queue.note_fault(route, rule.effect, info.get("worker"), info.get("job_id"))
    if rule.kind == "status":
        return error(rule.status, f"injected fault {rule.describe()}")
    if rule.kind == "drop":
        if request.transport is not None:
            request.transport.close()
        raise asyncio.CancelledError()
    await asyncio.sleep(rule.delay_s)
    request[DELAYED_ARRIVAL] = queue.clock.now_ns()
    return await handler(request)


def rate_limit_middleware(limiter: RateLimiter) -> Any:
    @web.middleware
    async def limit(request: web.Request, handler: Handler) -> web.StreamResponse:
        route = _route_name(request)
        if not limiter.admit(route):
            info = request.match_info
            request.app[QUEUE_KEY].note_fault(route, "rate-limit", None, info.get("job_id"))
            return error(429, f"rate limit of /{route} exceeded (RunPod's documented limits)")
        try:
            return await handler(request)
        finally:
            limiter.release(route)

    return limit


async def bench_burst(request: web.Request) -> web.Response:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise JobError(400, 'burst body must be {"count": N, "input": {...}} or {"inputs": [...]}')
    inputs = body.get("inputs", [body.get("input", {})])
    if not isinstance(inputs, list) or not inputs:
        raise JobError(400, "inputs must be a non-empty list of job inputs")
    count = body.get("count", len(inputs))
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_BURST:
        raise JobError(400, f"count must be a whole number of jobs, 1..{MAX_BURST}")
    queue = request.app[QUEUE_KEY]
    meant = _meant(body, count, queue.clock.now_ns())
    jobs = []
    # Jobs meant for the same instant (and equally late) go into the queue in one call.
    indexed = groupby(enumerate(meant), key=itemgetter(1))
    for (late_ns, intended_ns), same in indexed:
        payloads = [inputs[i % len(inputs)] for i, _ in same]
        jobs += queue.submit_many(payloads, late_ns=late_ns, intended_ns=intended_ns)
    return web.json_response(
        {"count": len(jobs), "first": jobs[0].id, "submitted_ns": jobs[0].submitted_ns}
    )


def _meant(body: dict[str, Any], count: int, now: int) -> list[tuple[int, int | None]]:
    """When an open-loop driver meant each job to be submitted, as (late_ns, intended_ns) for
    JobQueue.submit_many: `intended_ns` (a number, or a list a job) on this queue's clock,
    which GET /_bench/clock reads; or `late_s`, how late the driver sent it by its own clock."""
    if "intended_ns" in body:
        given = body["intended_ns"]
        times = given if isinstance(given, list) else [given] * count
        if len(times) != count or not all(_is_instant(t, now) for t in times):
            raise JobError(
                400, "intended_ns must be the queue clock's ns within the last hour, or a list"
            )
        return [(0, t) for t in times]
    late = body.get("late_s", 0)  # the submission's lateness, or each job's (a list)
    lates = late if isinstance(late, list) else [late] * count
    if len(lates) != count or not all(_is_lateness(x) for x in lates):
        raise JobError(400, "late_s must be seconds late, 0..3600, or a list of them a job")
    return [(round(x * 1e9), None) for x in lates]


def _is_lateness(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 3600


def _is_instant(value: object, now: int) -> bool:
    hour = 3600 * 10**9
    return (
        isinstance(value, int) and not isinstance(value, bool) and now - hour < value < now + hour
    )


async def bench_clock(request: web.Request) -> web.Response:
    """The queue clock's now (ns), so an open-loop driver can send intended times on it."""
    return web.json_response({"now_ns": request.app[QUEUE_KEY].clock.now_ns()})


async def bench_reset(request: web.Request) -> web.Response:
    queue = request.app[QUEUE_KEY]
    queue.reset()
    gc.collect()  # the full collection the server skips while serving runs between reps
    return web.json_response({"ok": True, "cursor": queue.events_base})


async def bench_renew(request: web.Request) -> web.Response:
    """Between reps: every waiting take answered now, empty, so the next rep starts with takes
    sent after this one (JobQueue.renew_takes)."""
    return web.json_response({"renewed": request.app[QUEUE_KEY].renew_takes()})


async def bench_release(request: web.Request) -> web.Response:
    """The runner stops its workers (`?worker=ID`: that one): their long-polls are answered
    now, so they exit now."""
    worker = request.query.get("worker") or None
    return web.json_response({"released": request.app[QUEUE_KEY].release_long_polls(worker)})


async def bench_refreshed(request: web.Request) -> web.Response:
    """The runner's report of a refresh carried out: {"worker", "rc"}, the old process's exit
    code; a fresh process starts under that id and gets jobs once it polls."""
    body = await json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("worker"), str):
        raise JobError(400, 'refreshed body must be {"worker": ID, "rc": EXIT_CODE}')
    rc = body.get("rc")
    request.app[QUEUE_KEY].refreshed(body["worker"], rc if isinstance(rc, int) else None)
    return web.json_response({"ok": True})


async def bench_endpoint(request: web.Request) -> web.Response:
    """The endpoint id the worker and client routes are under (/v2/ID/...): a runner checks it
    before it points workers at this queue."""
    endpoint_id = request.app[SETTINGS_KEY].endpoint_id
    return web.json_response({"endpoint_id": endpoint_id, "path": f"/v2/{endpoint_id}"})


async def bench_events(request: web.Request) -> web.Response:
    cursor = int_query(request, "cursor", 0, 0, 2**62)
    limit = int_query(request, "limit", 50_000, 1, 1_000_000)
    events, after = request.app[QUEUE_KEY].events_since(cursor, limit)
    return web.json_response({"events": events, "next": after})


async def bench_state(request: web.Request) -> web.Response:
    queue = request.app[QUEUE_KEY]
    return web.json_response(
        {
            "counts": queue.counts(),
            "conservation": queue.conservation_error(),
            "now_ns": queue.clock.now_ns(),
            "waiting_takes": len(queue.waiting),
            # Where the event log ends at this snapshot: the events before it and these counts
            # describe one moment, even while workers go on finishing jobs (a rep cut short).
            "events_next": queue.events_base + len(queue.events),
        }
    )


async def bench_counts(request: web.Request) -> web.Response:
    """Cheap (no walk over the jobs): what the runner polls while a rep runs."""
    return web.json_response({"counts": request.app[QUEUE_KEY].counts()})


async def bench_workers(request: web.Request) -> web.Response:
    """The watchdog's view (fake_queue.queue.watch); `overdue_s`: held longer than this is
    overdue."""
    text = request.query.get("overdue_s")
    try:
        overdue_s = None if text is None else float(text)
    except ValueError:
        raise JobError(400, f"overdue_s={text!r} is not a number of seconds") from None
    ids = request.query.get("ids") == "1"
    return web.json_response(worker_view(request.app[QUEUE_KEY], overdue_s, ids))


async def bench_latency(request: web.Request) -> web.Response:
    queue = request.app[QUEUE_KEY]
    if request.method in ("PUT", "POST"):
        body = await json_body(request)
        if not isinstance(body, dict):
            raise JobError(400, 'latency body must be an object like {"take": 0.5}')
        try:
            model = LatencyModel.from_mapping(body, queue.sampler.model)
        except LatencySpecError as exc:
            raise JobError(400, str(exc)) from None
        queue.sampler = LatencySampler(model, queue.sampler.seed)
    return web.json_response(queue.sampler.model.to_json())


async def bench_faults(request: web.Request) -> web.Response:
    """GET: the fault rules in force; PUT {"faults": ["job-done:drop:0.05", ...]}: replace them."""
    if request.method in ("PUT", "POST"):
        body = await json_body(request)
        rules = body.get("faults") if isinstance(body, dict) else None
        if not isinstance(rules, list):
            raise JobError(400, 'faults body must be {"faults": ["ROUTE:KIND:RATE", ...]}')
        try:
            parsed = tuple(parse_fault(str(rule)) for rule in rules)
        except FaultSpecError as exc:
            raise JobError(400, str(exc)) from None
        request.app[FAULTS_KEY].set_rules(parsed)
    return web.json_response({"faults": [r.describe() for r in request.app[FAULTS_KEY].rules]})


async def bench_fleet(request: web.Request) -> web.Response:
    """An autoscaled fleet (fake_queue.queue.autoscaled_fleet). PUT {"settings": {...}, "id_prefix",
    "seed"}: the platform scales from now on (settings null: a fixed fleet again); GET ?since=SEQ:
    the orders from SEQ on, each worker's state, whether the fleet is at rest, and now."""
    queue = request.app[QUEUE_KEY]
    if request.method in ("PUT", "POST"):
        body = await json_body(request)
        if not isinstance(body, dict) or "settings" not in body:
            raise JobError(400, 'fleet body must be {"settings": {...} or null, "id_prefix": ...}')
        settings = body["settings"]
        if settings is None:
            queue.fleet = None
        else:
            try:
                parsed = FleetSettings.from_json(settings, str(body.get("id_prefix", "w")))
            except (FleetSettingsError, LatencySpecError, TypeError) as exc:
                raise JobError(400, f"fleet settings: {exc}") from None
            queue.fleet = Fleet(queue, parsed, body.get("seed"))
    fleet = queue.fleet
    if fleet is None:
        return web.json_response({"fleet": None})
    since = int_query(request, "since", 0, 0, 2**62)
    return web.json_response(
        {
            "fleet": fleet.settings.to_json(),
            "orders": fleet.orders[since:],
            "workers": fleet.view(),
            "at_rest": fleet.at_rest,
            "now_ns": queue.clock.now_ns(),
        }
    )


async def bench_fleet_report(request: web.Request) -> web.Response:
    """The runner's report of a worker process: {"worker", "what": "started" | "exited", "rc"}."""
    fleet = request.app[QUEUE_KEY].fleet
    body = await json_body(request)
    if fleet is None:
        raise JobError(409, "no autoscaled fleet is set (PUT /_bench/fleet first)")
    if not isinstance(body, dict) or body.get("what") not in ("started", "exited"):
        raise JobError(400, 'report body must be {"worker": ID, "what": "started" | "exited"}')
    worker = str(body.get("worker"))
    if body["what"] == "started":
        fleet.started(worker)
    else:
        rc = body.get("rc")
        fleet.exited(worker, rc if isinstance(rc, int) else None)
    return web.json_response({"ok": True})


async def unknown_endpoint(request: web.Request) -> web.Response:
    expected = request.app[SETTINGS_KEY].endpoint_id
    if request.match_info["endpoint"] == expected:
        route = request.match_info["tail"].split("/")[0]
        if route in ROUTES:
            return error(405, f"{request.method} is not allowed on /{route}")
        return error(404, f"no route /v2/{expected}/{request.match_info['tail']}")
    return error(
        404,
        f"unknown endpoint id {request.match_info['endpoint']!r}; this server "
        f"serves /v2/{expected}/",
    )


def build_app(settings: ServerSettings) -> web.Application:
    queue = JobQueue(LatencySampler(settings.latency, settings.seed))
    middlewares: list[Any] = [json_errors]
    if settings.api_key:
        middlewares.append(auth_middleware(settings.api_key))
    if settings.rate_limits == "runpod":
        limiter = RateLimiter(RUNPOD_RATE_LIMITS, queue.clock)
        middlewares.append(rate_limit_middleware(limiter))
    middlewares.append(inject_faults)
    app = web.Application(middlewares=middlewares, client_max_size=MAX_BODY_BYTES)
    app[SETTINGS_KEY] = settings
    app[FAULTS_KEY] = FaultInjector(settings.faults, settings.seed)
    app[QUEUE_KEY] = queue
    prefix = f"/v2/{settings.endpoint_id}"
    add_worker_routes(app, prefix)
    add_client_routes(app, prefix)
    app.router.add_post(BENCH_PREFIX + "/burst", bench_burst)
    app.router.add_post(BENCH_PREFIX + "/reset", bench_reset)
    app.router.add_post(BENCH_PREFIX + "/release", bench_release)
    app.router.add_post(BENCH_PREFIX + "/renew", bench_renew)
    app.router.add_post(BENCH_PREFIX + "/refreshed", bench_refreshed)
    app.router.add_get(BENCH_PREFIX + "/endpoint", bench_endpoint)
    app.router.add_get(BENCH_PREFIX + "/events", bench_events)
    app.router.add_get(BENCH_PREFIX + "/state", bench_state)
    app.router.add_get(BENCH_PREFIX + "/clock", bench_clock)
    app.router.add_get(BENCH_PREFIX + "/counts", bench_counts)
    app.router.add_get(BENCH_PREFIX + "/workers", bench_workers)
    app.router.add_route("*", BENCH_PREFIX + "/latency", bench_latency)
    app.router.add_route("*", BENCH_PREFIX + "/faults", bench_faults)
    app.router.add_route("*", BENCH_PREFIX + "/fleet", bench_fleet)
    app.router.add_post(BENCH_PREFIX + "/fleet/report", bench_fleet_report)
    app.router.add_route("*", "/v2/{endpoint}/{tail:.*}", unknown_endpoint)
    return app
