"""Live mode's pure rules: endpoint URLs, keys, the loopback check, confirmation, pacing flags."""

from __future__ import annotations

import asyncio
import math
import random
import sys
import types

import pytest

from fake_queue.queue import virtual_clock
from jobbench.clients.endpoint import (
    confirm_burst,
    is_loopback,
    live_endpoint,
    needs_confirmation,
    parse_submit_rate,
    redact,
    resolve_endpoint,
)
from jobbench.clients.pacing import Pacer, RatePacer, WindowPacer, backoff_s
from jobbench.errors import EXIT_USAGE, UsageError


def test_an_endpoint_id_uses_runpods_base_url_or_the_sdk_override() -> None:
    assert resolve_endpoint("abc123", env={}) == "https://api.runpod.ai/v2/abc123"
    env = {"RUNPOD_ENDPOINT_BASE_URL": "http://127.0.0.1:8000/v2/"}
    assert resolve_endpoint("abc123", env=env) == "http://127.0.0.1:8000/v2/abc123"


def test_a_full_url_is_used_as_is_without_a_trailing_slash() -> None:
    assert (
        resolve_endpoint("https://api.runpod.ai/v2/abc/", env={}) == "https://api.runpod.ai/v2/abc"
    )


@pytest.mark.parametrize(
    "value",
    ["ftp://host/v2/x", "http://user:pw@host/v2/x", "http://host/v2/x?key=1", "http://h/v2/x/run"],
)
def test_bad_endpoint_urls_are_usage_errors_naming_the_flag(value: str) -> None:
    with pytest.raises(UsageError, match="--endpoint") as info:
        resolve_endpoint(value, env={})
    assert info.value.exit_code == EXIT_USAGE


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8000/v2/x", True),
        ("http://127.9.9.9/v2/x", True),
        ("http://localhost:8000/v2/x", True),
        ("http://[::1]:8000/v2/x", True),
        ("https://api.runpod.ai/v2/x", False),
        ("http://10.0.0.5:8000/v2/x", False),
        ("http://0.0.0.0:8000/v2/x", False),
        ("http://192.168.1.2/v2/x", False),
        ("http://localhost.example.com/v2/x", False),
    ],
)
def test_loopback_check(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback


def test_a_remote_endpoint_needs_a_key_from_the_flag_or_runpod_api_key() -> None:
    with pytest.raises(UsageError, match="RUNPOD_API_KEY"):
        live_endpoint("abc123", None, env={})
    assert live_endpoint("abc123", None, env={"RUNPOD_API_KEY": "k1"}).api_key == "k1"
    assert live_endpoint("abc123", "k2", env={"RUNPOD_API_KEY": "k1"}).api_key == "k2"
    assert live_endpoint("http://127.0.0.1:1/v2/x", None, env={}).api_key is None
    assert "k2" not in repr(live_endpoint("abc123", "k2", env={}))


def _never(question: str) -> bool:
    raise AssertionError(f"asked {question!r}")


def test_only_bursts_over_100_at_a_non_loopback_endpoint_need_confirmation() -> None:
    remote, local = "https://api.runpod.ai/v2/x", "http://127.0.0.1:8000/v2/x"
    assert needs_confirmation(remote, 101) and not needs_confirmation(remote, 100)
    assert not needs_confirmation(local, 100_000)
    confirm_burst(local, 5000, 5, yes=False, interactive=False, ask=_never)
    confirm_burst(remote, 100, 5, yes=False, interactive=False, ask=_never)
    confirm_burst(remote, 5000, 5, yes=True, interactive=False, ask=_never)


def test_without_a_terminal_and_without_yes_a_large_remote_burst_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="add --yes") as info:
        confirm_burst(
            "https://api.runpod.ai/v2/x", 101, 2, yes=False, interactive=False, ask=_never
        )
    assert info.value.exit_code == EXIT_USAGE
    assert "202 jobs" in str(info.value)


def test_an_interactive_no_submits_nothing() -> None:
    asked: list[str] = []

    def no(question: str) -> bool:
        asked.append(question)
        return False

    with pytest.raises(UsageError, match="not confirmed"):
        confirm_burst("https://api.runpod.ai/v2/x", 500, 1, yes=False, interactive=True, ask=no)
    assert asked and "500 jobs" in asked[0]
    confirm_burst(
        "https://api.runpod.ai/v2/x", 500, 1, yes=False, interactive=True, ask=lambda _: True
    )


@pytest.mark.parametrize(
    ("text", "rate"),
    [(None, None), ("runpod", None), ("50/s", 50.0), ("2.5", 2.5), ("off", math.inf)],
)
def test_submit_rate_values(text: str | None, rate: float | None) -> None:
    assert parse_submit_rate(text) == rate


@pytest.mark.parametrize("text", ["0", "-3/s", "fast", "nan"])
def test_bad_submit_rates_name_the_flag(text: str) -> None:
    with pytest.raises(UsageError, match="--submit-rate"):
        parse_submit_rate(text)


def test_redact_removes_the_key_everywhere() -> None:
    assert redact("key sk-1 and sk-1 again", "sk-1") == "key *** and *** again"
    assert redact("nothing", None) == "nothing"


def test_backoff_has_full_jitter_under_a_cap_and_honours_retry_after() -> None:
    rng = random.Random(1)
    values = [backoff_s(attempt, rng=rng) for attempt in range(12) for _ in range(20)]
    assert all(0.0 <= v <= 5.0 for v in values) and max(values) > 2.0
    assert backoff_s(0, retry_after_s=3.0, rng=rng) == 3.0


def on_virtual_time(monkeypatch: pytest.MonkeyPatch, pacer: Pacer, count: int) -> list[float]:
    """When each of `count` acquires returns, on a virtual-time loop (its clock jumps to the
    next timer); the pacers' module reads the loop's clock, so the times are exact."""
    module = sys.modules[type(pacer).__module__]
    clock = types.SimpleNamespace(monotonic=lambda: asyncio.get_running_loop().time())
    monkeypatch.setattr(module, "time", clock)

    async def starts() -> list[float]:
        times = []
        for _ in range(count):
            await pacer.acquire()
            times.append(asyncio.get_running_loop().time())
        return times

    return virtual_clock.run(starts(), start_s=100.0)


def test_the_window_pacer_lets_a_windowful_through_then_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    times = on_virtual_time(monkeypatch, WindowPacer(3, 0.2), 7)
    # three at once, the next three when the first window has passed, and so on
    assert times == pytest.approx([100.0] * 3 + [100.2] * 3 + [100.4], abs=1e-9)


def test_the_rate_pacer_spaces_starts_evenly(monkeypatch: pytest.MonkeyPatch) -> None:
    times = on_virtual_time(monkeypatch, RatePacer(50.0), 6)
    assert times == pytest.approx([100.0 + 0.02 * i for i in range(6)], abs=1e-9)
    assert on_virtual_time(monkeypatch, RatePacer(math.inf), 3) == [100.0] * 3  # no pacing


def test_status_polls_close_in_on_each_jobs_expected_end() -> None:
    from jobbench.clients.live_follow import (
        MAX_POLL_INTERVAL_S,
        POLL_INTERVAL_S,
        poll_delay_s,
        until_end_s,
    )
    from jobbench.clients.live_records import JobRecord

    assert poll_delay_s(None) == POLL_INTERVAL_S  # nothing known: the finest interval
    assert poll_delay_s(1.0) == 0.5 and poll_delay_s(0.1) == POLL_INTERVAL_S
    assert poll_delay_s(60.0) == MAX_POLL_INTERVAL_S
    s = 1_000_000_000
    running = JobRecord(0, {}, "accepted", sent_ns=10 * s, status="IN_PROGRESS", delay_ms=500)
    assert until_end_s(running, 11 * s, 0, 8, 2.0) == 1.5  # started at 10.5 s, 2 s long
    assert until_end_s(running, 11 * s, 0, 8, None) is None
    queued = JobRecord(1, {}, "accepted", sent_ns=10 * s, status="IN_QUEUE")
    assert until_end_s(queued, 11 * s, 64, 32, 0.5) == 1.5  # two waves ahead, then its own
    assert until_end_s(queued, 11 * s, 10, 0, 1.0) is None  # nothing seen running yet
