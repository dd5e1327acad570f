"""The model worker's configuration: its environment (the SDK's RUNPOD_* variables and
JOBBENCH_POLICY, JOBBENCH_SLOTS, JOBBENCH_TAKE_AHEAD; see policy_worker) read into a `Config`, or
a `ConfigError` naming the variable and the fix. Stdlib only.

A user may run the worker by hand, so its environment is checked here, by the rule the CLI's
flags are checked by (policies.take_ahead_problem), in the variables' own words."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from jobbench.workers import policies
from jobbench.workers.policies import DEFAULT_SLOTS, POLICY_ENV, SLOTS_ENV, TAKE_AHEAD_ENV


class ConfigError(Exception):
    """Invalid environment; the message names the variable and the fix."""


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
    policy = env.get(POLICY_ENV, "").strip() or policies.DEFAULT_POLICY
    if policy not in policies.POLICIES:
        raise ConfigError(
            f"{POLICY_ENV}={policy!r} is unknown; use one of {', '.join(policies.POLICIES)}"
        )
    slots = _int_env(
        env, SLOTS_ENV, DEFAULT_SLOTS, 1, "set the number of concurrent slots, e.g. 32"
    )
    take_ahead = _int_env(env, TAKE_AHEAD_ENV, 0, 0, "set K, the jobs to take ahead")
    problem = policies.take_ahead_problem(policy, take_ahead)
    if problem == policies.NEEDS_TAKE_AHEAD:
        raise ConfigError(f"{POLICY_ENV}={policy} needs {TAKE_AHEAD_ENV}=K with K > 0")
    if problem == policies.NO_TAKE_AHEAD:
        raise ConfigError(
            f"{TAKE_AHEAD_ENV}={take_ahead} only applies to {POLICY_ENV}="
            f"{' or '.join(policies.TAKES_AHEAD)} (got {policy}); unset it or set it to 0"
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
