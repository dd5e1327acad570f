"""The run loop on the live Target, in process, against the in-process fake queue's client API
(loopback, no workers): what a live run saves when it is stopped or breaks, and the checks of
its flags."""

from __future__ import annotations

import json
import math
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from fake_queue.http.server import RunningServer
from jobbench.clients.endpoint import Endpoint
from jobbench.clients.live_burst import LiveBurst
from jobbench.commands.run import RunRequest, live_plan
from jobbench.core.live.live_target import LiveSession, LiveTarget
from jobbench.core.run.loop import add_rep, run_plans
from jobbench.core.run.target_seam import Plan
from jobbench.core.scenario.checks import Bound
from jobbench.core.scenario.config import RunConfig, Scenario
from jobbench.errors import EXIT_USAGE, Interrupted, UsageError
from jobbench.measure import metrics
from jobbench.measure.figures import PhaseSamples
from jobbench.measure.live_metrics import live_rep_measure
from jobbench.render.text.plain_progress import PlainProgress
from jobbench.results.model import ScenarioResult, to_json
from tests.unit.cli import run_cli
from tests.unit.test_live_metrics import record

SPAN = {"submission_span_s": {"median": 0.09, "min": 0.09, "max": 0.09}}


def plan(url: str, out: Path) -> Plan:
    scenario = Scenario("live-3j-0.05s", burst=3, job_seconds=0.05)
    config = RunConfig((scenario,), reps=2, label="cut", out=out, quiet=True, save_events=False)
    return Plan(config, LiveTarget(Endpoint(url), submit_rate=None))


def run_live(plan: Plan, progress: PlainProgress) -> dict[str, Any]:
    return run_plans([plan], progress)[0]


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
        run_live(plan(server.endpoint_url, tmp_path), SigtermOnMessage(quiet=True))
    doc = json.loads((tmp_path / "cut.json").read_text())
    assert doc["complete"] is False and doc["interrupted"] is True
    assert "SIGTERM" in doc["error"] and doc["scenarios"] == []
    assert signal.getsignal(signal.SIGTERM) is guard  # the handler from before is back


def test_an_unexpected_error_is_raised_as_is_and_saved_in_the_result(
    start_server: Callable[..., RunningServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: LiveBurst) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(LiveBurst, "_sample_health", broken)  # a bug, not the endpoint
    server = start_server()
    with pytest.raises(RuntimeError, match="boom"):
        run_live(plan(server.endpoint_url, tmp_path), PlainProgress(quiet=True))
    doc = json.loads((tmp_path / "cut.json").read_text())
    assert doc["complete"] is False and doc["interrupted"] is False
    assert doc["error"] == "RuntimeError: boom"


def request(**overrides: Any) -> RunRequest:
    values: dict[str, Any] = {"endpoint": "http://127.0.0.1:9/v2/x", "burst": 10, "reps": 1}
    return RunRequest(**values | {"label": "live", "events": False, "quiet": True} | overrides)


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("job_seconds", -1.0),
        ("job_seconds", math.nan),
        ("job_seconds", math.inf),
        ("burst", 0),
    ],
)
def test_live_flags_get_the_checks_of_fake_queue_runs(flag: str, value: Any) -> None:
    with pytest.raises(UsageError, match="--" + flag.replace("_", "-")):
        live_plan(request(**{flag: value}))


@pytest.mark.parametrize(
    ("flag", "value"), [("--reps", "0"), ("--label", "../up"), ("--max-fail-ratio", "2")]
)
def test_a_live_runs_flags_are_checked_as_they_are_read_as_any_runs_are(
    flag: str,
    value: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    args = ["run", "--endpoint", "http://127.0.0.1:9/v2/x", flag, value]
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == EXIT_USAGE
    assert capsys.readouterr().err.startswith(f"error: {flag} ")
    assert not list(tmp_path.iterdir())


def entry_of(plan: Plan) -> ScenarioResult:
    target = plan.target
    assert isinstance(target, LiveTarget)
    entry = LiveSession(plan.config.scenarios[0], target, PlainProgress(quiet=True)).entry()
    return ScenarioResult.model_validate(entry)  # as the loop takes it


def figures(entry: ScenarioResult) -> list[dict[str, Any]]:
    return [rep.model_dump(exclude_unset=True) for rep in entry.reps]


def test_a_partial_last_rep_stays_out_of_the_summary_when_whole_reps_exist() -> None:
    entry = entry_of(plan("http://127.0.0.1:9/v2/x", Path(".")))
    raw: list[PhaseSamples] = []
    cut = record()
    for job in cut.jobs[:9]:  # stopped with one job done: a much later time to first
        job.done_ns = None
    cut.stopped = "interrupted"
    for rec in (record(), cut):
        add_rep(entry, live_rep_measure(rec), raw)
    assert len(entry.reps) == 2 and entry.reps[1].time_to_first_s == pytest.approx(2.9)
    saved = to_json(entry)
    assert saved["summary"] == {**metrics.summarise_reps(figures(entry)[:1]), **SPAN}
    assert saved["pooled_phases"] == metrics.pooled_phases(raw[:1])


def test_a_lone_partial_rep_is_summarised_rather_than_nothing() -> None:
    entry = entry_of(plan("http://127.0.0.1:9/v2/x", Path(".")))
    cut = record()
    cut.stopped = "timeout"
    add_rep(entry, live_rep_measure(cut), [])
    assert to_json(entry)["summary"] == {**metrics.summarise_reps(figures(entry)), **SPAN}


def test_a_profile_at_a_live_endpoint_is_planned_under_its_own_name_and_params() -> None:
    plan = live_plan(request(load="rate:20/s:for:1s", job_seconds=0.05))
    (scenario,) = plan.config.scenarios
    assert scenario.name == "live-rate-20-for-1s-0.05s" and scenario.burst == 20
    entry = entry_of(plan)
    assert entry.params.burst == 20 and entry.params.model_extra == {"load": "rate:20/s:for:1s"}
    burst = entry_of(live_plan(request()))
    assert "load" not in (burst.params.model_extra or {})  # a burst pairs with older results


def test_a_live_profile_that_cannot_run_is_a_one_line_error_naming_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(UsageError, match=r"^--load rate:20:for:1s: '20' is not a rate"):
        live_plan(request(load="rate:20:for:1s"))
    monkeypatch.setattr(
        "jobbench.core.scenario.build.BURST", Bound("--burst", 1, 10, "a test's bound")
    )
    with pytest.raises(UsageError, match=r"^--load rate:20/s:for:1s: 20 jobs a rep; .* at most 10"):
        live_plan(request(load="rate:20/s:for:1s"))
