"""A live endpoint: its URL (from a URL or an endpoint id), its key, and the safety rules."""

from __future__ import annotations

import ipaddress
import math
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from jobbench.errors import UsageError

DEFAULT_BASE_URL = "https://api.runpod.ai/v2"
BASE_URL_ENV = "RUNPOD_ENDPOINT_BASE_URL"  # the SDK's own override
KEY_ENV = "RUNPOD_API_KEY"
CONFIRM_ABOVE = 100  # bursts larger than this at a non-loopback endpoint need a yes
ENDPOINT_ID = re.compile(r"^[A-Za-z0-9_-]+$")
ROUTES = ("run", "runsync", "status", "health", "cancel", "stream", "purge-queue", "retry")


@dataclass(frozen=True)
class Endpoint:
    """Where a live run or Locust sends its requests, and the key it sends with them."""

    url: str  # the endpoint URL, .../v2/ID, never with a key in it
    api_key: str | None = field(default=None, repr=False)


def resolve_endpoint(value: str, env: dict[str, str] | None = None) -> str:
    """`--endpoint URL` (used as is) or `--endpoint ID` (RunPod's base URL + /ID)."""
    env = dict(os.environ) if env is None else env
    value = value.strip()
    if ENDPOINT_ID.match(value):
        base = env.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        return base.rstrip("/") + "/" + value
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"--endpoint {value!r}: give an endpoint id or a URL like "
            "https://api.runpod.ai/v2/ENDPOINT_ID"
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        raise UsageError(
            "--endpoint: the URL must not carry credentials or a query; pass the key with "
            f"--api-key or {KEY_ENV}"
        )
    url = value.rstrip("/")
    if url.rsplit("/", 1)[-1] in ROUTES:
        raise UsageError(
            f"--endpoint {value!r}: give the endpoint URL without the route, e.g. .../v2/ID"
        )
    return url


def resolve_key(flag: str | None, env: dict[str, str] | None = None) -> str | None:
    env = dict(os.environ) if env is None else env
    return flag or env.get(KEY_ENV) or None


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def live_endpoint(
    endpoint: str, api_key: str | None, env: dict[str, str] | None = None
) -> Endpoint:
    url = resolve_endpoint(endpoint, env)
    key = resolve_key(api_key, env)
    if key is None and not is_loopback(url):
        raise UsageError(f"--api-key: {url} needs an API key; pass --api-key KEY or set {KEY_ENV}")
    return Endpoint(url, key)


def needs_confirmation(url: str, burst: int) -> bool:
    return burst > CONFIRM_ABOVE and not is_loopback(url)


def ask_stdin(question: str) -> bool:
    """The question on stderr, a yes read from stdin."""
    sys.stderr.write(question + " [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def confirm_burst(
    url: str,
    burst: int,
    reps: int,
    *,
    yes: bool,
    interactive: bool,
    ask: Callable[[str], bool] = ask_stdin,
) -> None:
    """Bursts over 100 jobs at a real endpoint cost money: ask (on the terminal, unless told
    how), or demand --yes when we can't."""
    if yes or not needs_confirmation(url, burst):
        return
    question = f"submit {burst} jobs x {reps} reps = {burst * reps} jobs to {url}?"
    if not interactive:
        raise UsageError(
            f"--yes: {question.removesuffix('?')} needs confirmation and stdin is not a "
            "terminal; add --yes"
        )
    if not ask(question):
        raise UsageError("not confirmed: nothing was submitted (add --yes to skip the question)")


def parse_submit_rate(text: str | None) -> float | None:
    """`--submit-rate`: None = RunPod's /run window (default); `N/s` or `N`; `off` = unpaced."""
    if text is None or text.strip().lower() in ("", "runpod"):
        return None
    value = text.strip().lower()
    if value in ("off", "max", "unlimited"):
        return math.inf
    number = value.removesuffix("/s")
    try:
        rate = float(number)
    except ValueError:
        rate = math.nan
    if not math.isfinite(rate) or rate <= 0:
        raise UsageError(
            f"--submit-rate {text!r}: use jobs per second like 50/s, runpod (the default "
            "window, 1000 per 10 s) or off"
        )
    return rate


def describe_rate(rate: float | None) -> str:
    if rate is None:
        return "runpod"
    return "off" if math.isinf(rate) else f"{rate:g}/s"


def redact(text: str, key: str | None) -> str:
    """Belt and braces: nothing we print or save may carry the key, even if a server echoes it."""
    return text.replace(key, "***") if key else text
