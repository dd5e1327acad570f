"""The policy-model worker: a compact asyncio worker that speaks runpod 1.12.0's worker HTTP
protocol (same URLs, parameters and bodies; docs/protocol.md 1.2-1.3) and schedules
takes by one policy of docs/latency-model.md (see model_policies).

    python -m jobbench.workers.model_worker

Environment: the SDK's RUNPOD_WEBHOOK_GET_JOB, RUNPOD_WEBHOOK_POST_OUTPUT, RUNPOD_POD_ID,
RUNPOD_AI_API_KEY, RUNPOD_WEBHOOK_PING, RUNPOD_PING_INTERVAL (ms), plus JOBBENCH_POLICY
(sdk-1.12 | drain | take-ahead, default drain), JOBBENCH_SLOTS (default 32) and
JOBBENCH_TAKE_AHEAD (K, default 0; > 0 for take-ahead only). SIGTERM/SIGINT: stop taking,
finish running and held jobs, post their results, exit 0. Bad configuration: exit 2.
Stdlib and aiohttp only: N workers must not pay for jobbench's CLI imports.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp

from fake_queue import precise_loop, protocol
from jobbench.workers.model_policies import Job, RateLimited, log, make_policy
from jobbench.workers.raw_http import RawClient, RawHttpError
from jobbench.workers.run_job import RUNPOD_VERSION, run_handler

EXIT_CONFIG = 2  # README.md "Exit codes": usage or config error
DONE_RETRY_PAUSES_S = (2.0, 3.0)  # aiohttp_retry FibonacciRetry(attempts=3): on status >= 500
FORM_HEADERS = {"charset": "utf-8", "Content-Type": "application/x-www-form-urlencoded"}


class ConfigError(Exception):
    """Invalid environment; the message names the variable and the fix."""


class TakeFailed(Exception):
    """job-take answered an error status."""


@dataclass(frozen=True)
class Config:
    policy: str
    slots: int
    take_ahead: int
    worker_id: str
    take_url: str  # $ID substituted, as the SDK does at import
    done_url: str  # $RUNPOD_POD_ID substituted; $ID per job
    ping_url: str | None
    ping_interval_s: float
    api_key: str | None


def _int_env(env: Mapping[str, str], name: str, default: int, low: int, hint: str) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"{name}={text!r} is not an integer; {hint}") from None
    if value < low:
        raise ConfigError(f"{name}={value} must be >= {low}; {hint}")
    return value


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigError(
            f"{name} is not set; point it at the queue (docs/protocol.md 1.2 lists "
            "working templates)"
        )
    return value


def load_config(env: Mapping[str, str]) -> Config:
    policy = env.get("JOBBENCH_POLICY", "").strip() or protocol.DEFAULT_POLICY
    if policy not in protocol.POLICIES:
        raise ConfigError(
            f"JOBBENCH_POLICY={policy!r} is unknown; use one of {', '.join(protocol.POLICIES)}"
        )
    slots = _int_env(env, "JOBBENCH_SLOTS", 32, 1, "set the number of concurrent slots, e.g. 32")
    take_ahead = _int_env(env, "JOBBENCH_TAKE_AHEAD", 0, 0, "set K, the jobs to take ahead")
    problem = protocol.take_ahead_problem(policy, take_ahead)
    if problem == protocol.NEEDS_TAKE_AHEAD:
        raise ConfigError("JOBBENCH_POLICY=take-ahead needs JOBBENCH_TAKE_AHEAD=K with K > 0")
    if problem == protocol.NO_TAKE_AHEAD:
        raise ConfigError(
            f"JOBBENCH_TAKE_AHEAD={take_ahead} only applies to "
            f"JOBBENCH_POLICY=take-ahead (got {policy}); unset it or set it to 0"
        )
    interval_ms = _int_env(env, "RUNPOD_PING_INTERVAL", 10_000, 1, "set the heartbeat period in ms")
    worker_id = env.get("RUNPOD_POD_ID") or str(uuid.uuid4())  # the SDK's fallback
    take_template = _required(env, "RUNPOD_WEBHOOK_GET_JOB")
    done_template = _required(env, "RUNPOD_WEBHOOK_POST_OUTPUT")
    if "$ID" not in done_template:
        raise ConfigError("RUNPOD_WEBHOOK_POST_OUTPUT has no $ID; job-done could not name the job")
    ping = env.get("RUNPOD_WEBHOOK_PING")
    return Config(
        policy=policy,
        slots=slots,
        take_ahead=take_ahead,
        worker_id=worker_id,
        take_url=take_template.replace("$ID", worker_id),
        done_url=done_template.replace("$RUNPOD_POD_ID", worker_id),
        ping_url=ping.replace("$RUNPOD_POD_ID", worker_id) if ping else None,
        ping_interval_s=interval_ms / 1000,
        api_key=env.get("RUNPOD_AI_API_KEY") or None,
    )


def jobs_from_answer(status: int, content_type: str, body: bytes) -> list[Job]:
    """A job-take answer, judged as 1.12.0's get_job judges it."""
    if status in (204, 400):  # no jobs (400: FlashBoot, per the SDK)
        return []
    if status == 429:
        raise RateLimited()
    if status >= 400:
        raise TakeFailed(f"job-take answered {status}")
    if content_type != "application/json" or not body:
        return []
    try:
        payload = json.loads(body)
    except ValueError:  # includes UnicodeDecodeError
        return []
    if isinstance(payload, dict):
        if "id" not in payload or "input" not in payload:
            raise ValueError("Job has missing field(s): id or input.")
        return [payload]
    if not isinstance(payload, list):
        return []
    jobs = [job for job in payload if isinstance(job, dict) and "id" in job]
    if len(jobs) != len(payload):
        log(f"job-take-batch: dropped {len(payload) - len(jobs)} entries without an id")
    return jobs


class HttpLink:
    """The worker-facing calls, with 1.12.0's URLs: model_policies.Link over aiohttp, or over
    the lean client (raw_http) for takes and results when given one."""

    def __init__(
        self,
        config: Config,
        session: aiohttp.ClientSession,
        lean: tuple[RawClient, RawClient] | None = None,
    ) -> None:
        self.config = config
        self.session = session
        self.lean = lean  # (takes, results)
        self.stop_enabled = protocol.TAKE_SEGMENT in config.take_url
        self.stop_url = config.take_url.replace(protocol.TAKE_SEGMENT, protocol.STOP_SEGMENT)

    async def take(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job]:
        url = self.config.take_url
        if count > 1:
            url = (
                url.replace(protocol.TAKE_SEGMENT, protocol.TAKE_BATCH_SEGMENT)
                + f"&batch_size={count}"
            )
        url += f"&job_in_progress={int(in_progress)}"
        if self.lean is not None:
            answer = await self.lean[0].request("GET", url, on_sent=on_sent)
            return jobs_from_answer(answer.status, answer.content_type, answer.body)
        if on_sent is not None:
            on_sent()  # aiohttp does not say when the request is out; close enough
        async with self.session.get(url) as response:
            body = await response.read()
            return jobs_from_answer(response.status, response.content_type, body)

    async def stops(self) -> list[str]:
        async with self.session.get(self.stop_url) as response:
            if response.status == 204:
                return []
            if response.status == 429:
                raise RateLimited()
            response.raise_for_status()
            if response.content_type != "application/json":
                return []
            try:
                payload = await response.json()
            except ValueError:
                return []
        ids = payload.get("jobsToStop", []) if isinstance(payload, dict) else []
        if not isinstance(ids, list):
            return []
        return [job_id for job_id in ids if isinstance(job_id, str)]

    async def process(self, job: Job) -> None:
        await self.post_done(str(job["id"]), await self.handle(job))

    async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
        return await run_handler(job, self.config.worker_id, started)

    async def post_done(self, job_id: str, result: dict[str, Any]) -> None:
        """JSON text sent as a form, like the SDK; retried on >= 500 only; failures are logged."""
        url = self.config.done_url.replace("$ID", job_id) + "&isStream=false"
        body = json.dumps(result, ensure_ascii=False).encode()
        for pause in (*DONE_RETRY_PAUSES_S, None):
            try:
                status = await self._post(url, body)
            except (aiohttp.ClientError, RawHttpError) as exc:
                log(f"job-done for {job_id} failed: {type(exc).__name__}: {exc}")
                return
            if status < 500:
                if status >= 400:
                    log(f"job-done for {job_id} answered {status}; result lost")
                return
            if pause is None:
                log(f"job-done for {job_id} answered {status} 3 times; result lost")
                return
            await asyncio.sleep(pause)

    async def _post(self, url: str, body: bytes) -> int:
        if self.lean is not None:
            return (await self.lean[1].request("POST", url, body)).status
        async with self.session.post(url, data=body, headers=FORM_HEADERS) as response:
            await response.read()
            return response.status


async def heartbeat(
    session: aiohttp.ClientSession, url: str, interval_s: float, job_ids: Callable[[], list[str]]
) -> None:
    """GET the ping URL now and every interval, with the SDK's query parameters."""
    timeout = aiohttp.ClientTimeout(total=2 * interval_s)
    while True:
        params: dict[str, str] = {}
        ids = job_ids()
        if ids:
            params["job_id"] = ",".join(ids)
        params["runpod_version"] = RUNPOD_VERSION
        full = url + ("&" if "?" in url else "?") + urlencode(params)
        try:
            async with session.get(full, timeout=timeout) as response:
                await response.read()
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            log(f"ping failed: {type(exc).__name__}: {exc}")
        await asyncio.sleep(interval_s)


async def serve(config: Config) -> None:
    headers = {"User-Agent": f"jobbench-model-worker (runpod {RUNPOD_VERSION} protocol)"}
    if config.api_key:
        headers["Authorization"] = config.api_key  # raw key, no "Bearer", as the SDK sends it
    # As the SDK's session: no connection limit, 600 s total; takes are bounded at 90 s.
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0),
        timeout=aiohttp.ClientTimeout(total=600),
        headers=headers,
    ) as session:
        # sdk-1.12 talks through aiohttp like the SDK it ports, so its round trips cost what
        # the real worker's do (the calibration against it holds within 1.2 %).
        lean = None
        if config.policy != protocol.SDK_112 and all(
            map(RawClient.accepts, (config.take_url, config.done_url))
        ):
            lean = (
                RawClient(config.take_url, headers, limit=1),  # one take at a time
                RawClient(config.done_url, {**headers, **FORM_HEADERS}),
            )
        policy = make_policy(
            config.policy, HttpLink(config, session, lean), config.slots, config.take_ahead
        )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, policy.shutdown)
        pinger = None
        if config.ping_url:
            pinger = asyncio.create_task(
                heartbeat(session, config.ping_url, config.ping_interval_s, policy.job_ids)
            )
        try:
            await policy.run()
        finally:
            for client in lean or ():
                await client.close()
            if pinger is not None:
                pinger.cancel()
                await asyncio.wait([pinger])


def main() -> int:
    # Until the event loop installs its handlers, SIGTERM and SIGINT just end the process cleanly.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        config = load_config(os.environ)
    except ConfigError as exc:
        print(f"model_worker: invalid configuration: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    with contextlib.suppress(KeyboardInterrupt):  # signalled before it took anything
        precise_loop.run(serve(config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
