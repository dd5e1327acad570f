"""`run_live` in process against the in-process fake queue's client API (loopback, no workers):
what a live run saves when it is stopped or breaks, and the checks of its flags."""

from __future__ import annotations

import json
import math
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from fake_queue.server import RunningServer
from jobbench.clients.endpoint import LiveTarget
from jobbench.clients.live_burst import LiveBurst
from jobbench.commands.live import LiveRunConfig, _add_rep, live_config, run_live, scenario_entry
from jobbench.errors import Interrupted, UsageError
from jobbench.measure import metrics
from jobbench.measure.live_metrics import live_rep_metrics
from jobbench.render.plain_progress import PlainProgress
from tests.unit.test_live_metrics import record

SPAN = {"submission_span_s": {"median": 0.09, "min": 0.09, "max": 0.09}}


def config(url: str, out: Path) -> LiveRunConfig:
    return LiveRunConfig(
        target=LiveTarget(url),
        burst=3,
        job_seconds=0.05,
        inputs=(),
        reps=2,
        label="cut",
        out=out,
        submit_rate=None,
        save_events=False,
        quiet=True,
    )


class Unhandled(Exception):
    """What a SIGTERM raises here when jobbench installed no handler (the default would kill
    pytest)."""


def guard(signum: int, frame: FrameType | None) -> None:
    raise Unhandled


@pytest.fixture
def sigterm_guard() -> Iterator[None]:
    previous = signal.signal(signal.SIGTERM, guard)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class SigtermOnMessage(PlainProgress):
    """SIGTERM (a CI timeout) after the preflight, before the first burst: outside any loop."""

    def message(self, text: str) -> None:
        signal.raise_signal(signal.SIGTERM)


def test_a_sigterm_between_bursts_saves_a_result_marked_interrupted(
    start_server: Callable[..., RunningServer], tmp_path: Path, sigterm_guard: None
) -> None:
    server = start_server()
    with pytest.raises(Interrupted, match="partial results saved"):
        run_live(config(server.endpoint_url, tmp_path), SigtermOnMessage(quiet=True))
    doc = json.loads((tmp_path / "cut.json").read_text())
    assert doc["complete"] is False and doc["interrupted"] is True
    assert "SIGTERM" in doc["error"] and doc["scenarios"][0]["reps"] == []
    assert signal.getsignal(signal.SIGTERM) is guard  # the handler from before is back


def test_an_unexpected_error_is_raised_as_is_and_saved_in_the_result(
    start_server: Callable[..., RunningServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: LiveBurst) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(LiveBurst, "_sample_health", broken)  # a bug, not the endpoint
    server = start_server()
    with pytest.raises(RuntimeError, match="boom"):
        run_live(config(server.endpoint_url, tmp_path), PlainProgress(quiet=True))
    doc = json.loads((tmp_path / "cut.json").read_text())
    assert doc["complete"] is False and doc["interrupted"] is False
    assert doc["error"] == "RuntimeError: boom"


def flags(**overrides: Any) -> dict[str, Any]:
    values = {"endpoint": "http://127.0.0.1:9/v2/x", "api_key": None, "burst": 10, "reps": 1}
    values |= {"job_seconds": 0.5, "label": "live", "input_json": None, "inputs": None}
    values |= {"out": "reports", "submit_rate": None, "events": False, "quiet": True}
    return values | overrides


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("job_seconds", -1.0),
        ("job_seconds", math.nan),
        ("job_seconds", math.inf),
        ("burst", 0),
        ("reps", 0),
        ("label", "../up"),
    ],
)
def test_live_flags_get_the_checks_of_fake_queue_runs(flag: str, value: Any) -> None:
    with pytest.raises(UsageError, match="--" + flag.replace("_", "-")):
        live_config(flags(**{flag: value}))


def test_a_partial_last_rep_stays_out_of_the_summary_when_whole_reps_exist() -> None:
    entry: dict[str, Any] = scenario_entry(config("http://127.0.0.1:9/v2/x", Path(".")))
    raw: list[dict[str, Any]] = []
    cut = record()
    for job in cut.jobs[:9]:  # stopped with one job done: a much later time to first
        job.done_ns = None
    cut.stopped = "interrupted"
    for rec in (record(), cut):
        _add_rep(entry, live_rep_metrics(rec, keep_samples=True), raw)
    assert len(entry["reps"]) == 2 and entry["reps"][1]["time_to_first_s"] == pytest.approx(2.9)
    assert entry["summary"] == {**metrics.summarise_reps(entry["reps"][:1]), **SPAN}
    assert entry["pooled_phases"] == metrics.pooled_phases(raw[:1])


def test_a_lone_partial_rep_is_summarised_rather_than_nothing() -> None:
    entry: dict[str, Any] = scenario_entry(config("http://127.0.0.1:9/v2/x", Path(".")))
    cut = record()
    cut.stopped = "timeout"
    _add_rep(entry, live_rep_metrics(cut, keep_samples=True), [])
    assert entry["summary"] == {**metrics.summarise_reps(entry["reps"]), **SPAN}
