"""The policy-model worker: a compact asyncio worker that speaks runpod 1.12.0's worker HTTP
protocol (same URLs, parameters and bodies; docs/protocol.md 1.2-1.3) and schedules
takes by one policy of docs/latency-model.md (see policy_choice).

    python -m jobbench.workers.policy_worker

Environment: the SDK's RUNPOD_WEBHOOK_GET_JOB, RUNPOD_WEBHOOK_POST_OUTPUT, RUNPOD_POD_ID,
RUNPOD_AI_API_KEY, RUNPOD_WEBHOOK_PING, RUNPOD_PING_INTERVAL (ms), plus JOBBENCH_POLICY
(one of policies.POLICIES, default drain), JOBBENCH_SLOTS (default 32) and JOBBENCH_TAKE_AHEAD
(K, default 0; > 0 for take-ahead and sdk-take-ahead only), named in policies.py.
SIGTERM/SIGINT: stop taking, finish running and held jobs, post their results, exit 0. Bad
configuration: exit 2. Stdlib and aiohttp only: N workers must not pay for jobbench's CLI
imports.

This module is the process: it reads the environment (policy_worker_config), opens the HTTP
link (http_link) and runs the policy (policy_choice) until a stop signal (procs.signals).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import aiohttp

from fake_queue import precise_loop
from jobbench.procs.signals import sigterm_as_interrupt, stop_signals_call
from jobbench.workers.http_link import (
    FORM_HEADERS,
    HttpLink,
    heartbeat,
)
from jobbench.workers.policies import SDK_BASED
from jobbench.workers.policy_choice import make_policy
from jobbench.workers.policy_worker_config import Config, ConfigError, load_config
from jobbench.workers.raw_http import RawClient
from jobbench.workers.run_job import RUNPOD_VERSION
from jobbench.workers.worker_cpu import SdkCodeCpu, WorkerCpu

EXIT_CONFIG = 2  # README.md "Exit codes": usage or config error


def session_headers(config: Config) -> dict[str, str]:
    headers = {"User-Agent": f"jobbench-model-worker (runpod {RUNPOD_VERSION} protocol)"}
    if config.api_key:
        headers["Authorization"] = config.api_key  # raw key, no "Bearer", as the SDK sends it
    return headers


def lean_clients(config: Config, headers: dict[str, str]) -> tuple[RawClient, RawClient] | None:
    """(takes, results) over the lean client, when both URLs suit it; None: aiohttp for all.
    The policies on 1.12.0's loops talk through aiohttp like the SDK they port, so their round
    trips cost what the real worker's do (sdk-1.12's calibration against it holds within 1.2 %)."""
    if config.policy in SDK_BASED or not all(
        map(RawClient.accepts, (config.take_url, config.done_url))
    ):
        return None
    return (
        RawClient(config.take_url, headers, limit=1),  # one take at a time
        RawClient(config.done_url, {**headers, **FORM_HEADERS}),
    )


def own_code_cpu(policy: str) -> WorkerCpu | None:
    """What the worker's own code adds to a job's steps: the SDK's code beyond the model's for
    the SDK-based models, which stand for a real SDK worker; nothing for the ideal ones."""
    return SdkCodeCpu() if policy in SDK_BASED else None


async def serve(config: Config) -> None:
    headers = session_headers(config)
    # As the SDK's session: no connection limit, 600 s total; takes are bounded at 90 s.
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0),
        timeout=aiohttp.ClientTimeout(total=600),
        headers=headers,
    ) as session:
        lean = lean_clients(config, headers)
        link = HttpLink(config, session, lean, own_code_cpu(config.policy))
        policy = make_policy(config.policy, link, config.slots, config.take_ahead)
        with stop_signals_call(policy.shutdown):  # also while the clients close
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
    # Until serve installs its handlers, SIGTERM and SIGINT just end the process cleanly.
    with sigterm_as_interrupt():
        try:
            config = load_config(os.environ)
        except ConfigError as exc:
            print(f"policy_worker: invalid configuration: {exc}", file=sys.stderr)
            return EXIT_CONFIG
        with contextlib.suppress(KeyboardInterrupt):  # signalled before it took anything
            run_loop(config.policy)(serve(config))
    return 0


def run_loop(policy: str) -> Callable[[Coroutine[Any, Any, None]], None]:
    """The loop a policy runs on. The ideal policies run on the precise loop, whose timers fire
    on time. The SDK-based ones run on asyncio's stock loop, as runpod's JobScaler does
    (asyncio.run): each of its timed waits ends 0-1 ms late, and the job cache's take sizes
    follow that lateness (its 0.1 s tick, 20 ticks after a take, lands after that take's batch
    of job ends on the real branch and amid it on the precise loop; docs/fixes.md, "Real
    branches")."""
    if policy in SDK_BASED:
        return asyncio.run
    return precise_loop.run


if __name__ == "__main__":
    sys.exit(main())
