"""`--autoscale SPEC` (and a suite row's `autoscale`): an autoscaled fleet's settings as one
comma-separated list of KEY=VALUE (docs/fleet.md), read into fake_queue's FleetSettings;
--workers is its max workers.

    queue-delay=4 | request-count=8   the scaler and its value (one of them is required)
    active=0        workers always running (RunPod's active / min workers)
    idle=5          seconds without a job before a worker is stopped (idle timeout)
    cold=0.5        the cold start's modelled part, a latency distribution (0.5,
                    uniform:0.5,2, lognormal:MU,SIGMA, samples:FILE); the worker process's own
                    start-up is real and comes on top
    every=1         seconds between the scaler's evaluations
    step=N          most workers one evaluation adds (queue delay: 1, request count: no limit)
    count=all       request count's count: all (queued + in progress) or queued
    from-zero=yes   queue delay: a job queued while no worker runs starts one at once
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fake_queue.api import FleetSettings, FleetSettingsError, LatencySpecError, parse_distribution
from fake_queue.queue.scalers import SCALERS
from jobbench.errors import UsageError

KEYS = ("active", "idle", "cold", "every", "step", "count", "from-zero")
EXAMPLE = "queue-delay=4,active=1,idle=5,cold=0.5"


def parse_autoscale(spec: str, max_workers: int, flag: str = "--autoscale") -> FleetSettings:
    """The settings `spec` gives, with `max_workers` (--workers); a one-line UsageError naming
    `flag` and the key otherwise."""
    values: dict[str, Any] = {"max_workers": max_workers}
    scaler = None
    for part in _parts(spec):
        key, sep, text = part.partition("=")
        key, text = key.strip(), text.strip()
        if not sep or not text:
            raise UsageError(f"{flag} {spec!r}: {part!r} is not KEY=VALUE; e.g. {EXAMPLE}")
        if key in SCALERS:
            if scaler is not None:
                raise UsageError(f"{flag} {spec!r}: one scaler, {' or '.join(SCALERS)}")
            scaler = key
            values["scaler"] = key
            values["scaler_value"] = _number(flag, key, text)
        elif key in KEYS:
            values.update(_setting(flag, key, text))
        else:
            known = ", ".join((*SCALERS, *KEYS))
            raise UsageError(f"{flag}: unknown key {key!r}; use {known}")
    if scaler is None:
        named = " or ".join(f"{rule.name}={rule.metavar}" for rule in SCALERS.values())
        raise UsageError(f"{flag} {spec!r}: name the scaler, {named}; e.g. {EXAMPLE}")
    try:
        return replace(FleetSettings(), **values)
    except FleetSettingsError as exc:
        raise UsageError(f"{flag}: {_key_of(exc.name)} {exc.problem}") from None


def _parts(spec: str) -> list[str]:
    """KEY=VALUE parts; a piece without `=` continues the value before it, as the comma of
    a distribution does (cold=uniform:0.5,2)."""
    parts: list[str] = []
    for piece in (p.strip() for p in spec.split(",")):
        if "=" not in piece and parts:
            parts[-1] += "," + piece
        else:
            parts.append(piece)
    return parts


def _setting(flag: str, key: str, text: str) -> dict[str, Any]:
    if key == "active":
        return {"active": _whole(flag, key, text)}
    if key == "step":
        return {"step": _whole(flag, key, text)}
    if key == "idle":
        return {"idle_timeout_s": _number(flag, key, text)}
    if key == "every":
        return {"period_s": _number(flag, key, text)}
    if key == "cold":
        try:
            return {"cold_start": parse_distribution(text, "cold")}
        except LatencySpecError as exc:
            raise UsageError(f"{flag}: cold={text}: {exc.problem}") from None
    if key == "count":
        if text not in ("all", "queued"):
            raise UsageError(
                f"{flag}: count={text}: use count=all (queued + in progress) or queued"
            )
        return {"count_in_progress": text == "all"}
    if text not in ("yes", "no"):
        raise UsageError(f"{flag}: from-zero={text}: use yes or no")
    return {"from_zero": text == "yes"}


def _number(flag: str, key: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"{flag}: {key}={text}: not a number; e.g. {EXAMPLE}") from None


def _whole(flag: str, key: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{flag}: {key}={text}: not a whole number") from None


def _key_of(setting: str) -> str:
    """FleetSettings' field -> the spec's key."""
    return {
        "max_workers": "--workers (the max workers):",
        "active": "active:",
        "idle_timeout_s": "idle:",
        "period_s": "every:",
        "scaler_value": "the scaler's value:",
        "step": "step:",
        "scaler": "scaler:",
    }.get(setting, f"{setting}:")
