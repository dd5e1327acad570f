"""The one run loop (core/run/loop.py) through its Target seam, on a scripted Target in this
process: the order reps run in, the result saved after every rep, and what a failure, Ctrl-C,
SIGTERM or a rep cut short leave in the saved result. The real Targets run in tests/integration and
e2e."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

import jobbench.core.run.loop
from jobbench.core.run.loop import run_plans
from jobbench.core.run.queue_figures import scenario_entry
from jobbench.core.run.target_seam import Plan, Progress, RepOutcome
from jobbench.core.scenario.config import RunConfig, Scenario
from jobbench.errors import Interrupted, JobbenchError, RunFailed
from jobbench.procs import lane_stop
from jobbench.render.text.plain_progress import PlainProgress
from jobbench.results.model import ScenarioResult, TargetBlock
from tests.unit.test_render_run import DRAIN, ENV, drain_rep, rep_of

Step = Callable[[str, int], JobbenchError | None]  # (side, rep) -> raise, or a stop, or None


def measured(rep: int) -> RepOutcome:
    events = drain_rep(DRAIN, rep)
    return RepOutcome(rep_of(DRAIN, events), events)


@dataclass
class Script:
    """What happened, in order, across every session of every plan."""

    log: list[str] = field(default_factory=list)
    saved_before: dict[str, list[int]] = field(default_factory=dict)  # reps on disk at each rep


@dataclass
class ScriptedSession:
    scenario: Scenario
    side: str
    path: Path
    script: Script
    step: Step

    @property
    def title(self) -> str:
        return f"{self.side} {self.scenario.name}"

    def start(self) -> None:
        self.script.log.append(f"start {self.side}")

    def entry(self) -> ScenarioResult:
        return scenario_entry(self.scenario, None)

    def environment(self) -> dict[str, Any]:
        return {"runpod": f"sdk of {self.side}"}

    def run_rep(self, rep: int, reps: int) -> RepOutcome:
        on_disk = json.loads(self.path.read_text())["scenarios"] if self.path.exists() else []
        self.script.saved_before.setdefault(self.side, []).append(
            len(on_disk[-1]["reps"]) if on_disk else 0
        )
        self.script.log.append(f"{self.side}{rep}")
        stopped = self.step(self.side, rep)
        outcome = measured(rep)
        return RepOutcome(outcome.measure, outcome.events, stopped)

    def stop(self) -> None:
        self.script.log.append(f"stop {self.side}")

    def keep_logs(self) -> None:
        self.script.log.append(f"keep logs {self.side}")

    @property
    def logs_folder(self) -> Path:
        return self.path.parent / f"logs-{self.side}"


@dataclass
class ScriptedTarget:
    side: str
    path: Path
    script: Script
    step: Step

    def describe(self) -> TargetBlock:
        return TargetBlock(kind="fake", endpoint=f"scripted {self.side}")

    def preflight(self, scenarios: Sequence[Scenario], progress: Progress) -> None:
        self.script.log.append(f"preflight {self.side}")

    def header(self, scenarios: Sequence[Scenario], reps: int) -> str:
        return f"{len(scenarios)} scenarios x {reps} reps"

    def session(self, scenario: Scenario, label: str, progress: Progress) -> ScriptedSession:
        return ScriptedSession(scenario, self.side, self.path, self.script, self.step)

    def lanes_room(self, scenarios: Sequence[Scenario]) -> int:
        return 1  # the scripted log is one sequence: its rows run one at a time


def plans(
    tmp_path: Path, step: Step, sides: str = "AB", reps: int = 3
) -> tuple[list[Plan], Script]:
    script = Script()
    made = []
    for side in sides:
        config = RunConfig((DRAIN,), reps=reps, label=side, out=tmp_path, save_events=False)
        path = tmp_path / f"{side}.json"
        made.append(Plan(config, ScriptedTarget(side, path, script, step)))
    return made, script


@pytest.fixture(autouse=True)
def no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """The result's environment asks git for the commit: a process, which unit tests start none
    of; the run's own environment block is not what these tests are about."""
    monkeypatch.setattr("jobbench.core.run.loop.environment", lambda runpod: ENV.model_copy())


def fine(side: str, rep: int) -> None:
    return None


def saved(tmp_path: Path, side: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((tmp_path / f"{side}.json").read_text())
    return doc


def test_two_plans_alternate_rep_by_rep_and_every_rep_is_saved_before_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reps a second or more apart, as a real run's: each is saved before the next begins
    # (closer together, at most once a second: tests/unit/test_events_file.py).
    monkeypatch.setattr(jobbench.core.run.loop, "SAVE_EVERY_S", 0.0)
    two, script = plans(tmp_path, fine)
    docs = run_plans(two, PlainProgress(quiet=True))
    assert script.log == [
        "preflight A", "preflight B", "start A", "start B",
        "A1", "B1", "A2", "B2", "A3", "B3", "stop A", "stop B",
    ]  # fmt: skip
    assert script.saved_before == {"A": [0, 1, 2], "B": [0, 1, 2]}
    for side, doc in zip("AB", docs):
        on_disk = saved(tmp_path, side)
        assert on_disk["complete"] is True and on_disk["error"] is None
        assert on_disk["target"] == {"kind": "fake", "endpoint": f"scripted {side}"}
        assert on_disk["environment"]["runpod"] == f"sdk of {side}"
        assert len(on_disk["scenarios"][0]["reps"]) == 3 == len(doc.scenarios[0].reps)


def test_a_failing_rep_keeps_what_ran_stops_every_session_and_keeps_their_logs(
    tmp_path: Path,
) -> None:
    def breaks(side: str, rep: int) -> None:
        if (side, rep) == ("B", 2):
            raise RunFailed("rep 2 of B did not finish")

    two, script = plans(tmp_path, breaks)
    with pytest.raises(RunFailed, match=r"rep 2 of B did not finish; logs kept in .*logs-A"):
        run_plans(two, PlainProgress(quiet=True))
    assert set(script.log[-4:-2]) == {"keep logs A", "keep logs B"}
    assert script.log[-2:] == ["stop A", "stop B"]
    a, b = saved(tmp_path, "A"), saved(tmp_path, "B")
    assert [len(a["scenarios"][0]["reps"]), len(b["scenarios"][0]["reps"])] == [2, 1]
    for doc in (a, b):
        assert doc["complete"] is False and doc["interrupted"] is False
        logs = f"{tmp_path / 'logs-A'}, {tmp_path / 'logs-B'}"
        assert doc["error"] == f"rep 2 of B did not finish; logs kept in {logs}"


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_in_a_rep_saves_the_result_marked_interrupted(
    tmp_path: Path, how: str
) -> None:
    def interrupted(side: str, rep: int) -> None:
        if rep == 2:
            if how == "sigterm":  # a CI job's timeout: handled exactly like Ctrl-C
                signal.raise_signal(signal.SIGTERM)
            raise KeyboardInterrupt

    before = signal.getsignal(signal.SIGTERM)
    one, script = plans(tmp_path, interrupted, sides="A")
    with pytest.raises(Interrupted, match=r"partial results saved in .*A\.json"):
        run_plans(one, PlainProgress(quiet=True))
    doc = saved(tmp_path, "A")
    assert doc["complete"] is False and doc["interrupted"] is True
    assert "Ctrl-C or SIGTERM" in doc["error"] and len(doc["scenarios"][0]["reps"]) == 1
    assert script.log[-1] == "stop A"
    assert signal.getsignal(signal.SIGTERM) is before  # the handler from before is back


def test_a_rep_cut_short_is_saved_first_then_ends_the_run(tmp_path: Path) -> None:
    def cut(side: str, rep: int) -> JobbenchError | None:
        return Interrupted("interrupted in rep 2: cancelled 3 of 5") if rep == 2 else None

    one, _ = plans(tmp_path, cut, sides="A")
    with pytest.raises(Interrupted, match="rep 2: cancelled 3 of 5; partial results saved"):
        run_plans(one, PlainProgress(quiet=True))
    doc = saved(tmp_path, "A")
    assert len(doc["scenarios"][0]["reps"]) == 2  # the cut rep is in the result
    assert doc["interrupted"] is True and doc["error"].startswith("interrupted in rep 2")


def test_a_variant_beside_the_comparison_that_its_workers_stop_ends_only_its_own_reps(
    tmp_path: Path,
) -> None:
    """A suite's extra variant (the `fixes` table's) whose workers hang in rep 2: its rep is
    saved, its session stopped at once with its logs kept, its result marked incomplete with
    why; A and B run every rep and complete, so the comparison does not lose its run to it."""

    def c_hangs(side: str, rep: int) -> JobbenchError | None:
        return RunFailed("worker w0 hung") if (side, rep) == ("C", 2) else None

    three, script = plans(tmp_path, c_hangs, sides="ABC")
    run_plans(three, PlainProgress(quiet=True), candidate=1, beside_from=2)
    assert script.log[script.log.index("C2") + 1 : script.log.index("C2") + 3] == [
        "keep logs C",
        "stop C",
    ]
    assert "C3" not in script.log and script.log.count("stop C") == 1
    assert script.log[-2:] == ["stop A", "stop B"]
    a, b, c = (saved(tmp_path, side) for side in "ABC")
    assert [len(d["scenarios"][0]["reps"]) for d in (a, b, c)] == [3, 3, 2]
    assert a["complete"] is b["complete"] is True and a.get("error") is b.get("error") is None
    assert c["complete"] is False and c["error"] == f"{DRAIN.name} rep 2: worker w0 hung"


def test_the_candidates_own_failure_still_ends_the_run_with_variants_beside_it(
    tmp_path: Path,
) -> None:
    def b_hangs(side: str, rep: int) -> JobbenchError | None:
        return RunFailed("worker w1 hung") if (side, rep) == ("B", 1) else None

    three, script = plans(tmp_path, b_hangs, sides="ABC")
    run_plans(three, PlainProgress(quiet=True), candidate=1, beside_from=2)
    assert "C1" not in script.log  # the run ended at B's rep, for the comparison to judge
    assert all(saved(tmp_path, side)["complete"] is False for side in "AB")


@dataclass
class LanedTarget(ScriptedTarget):
    """The scripted target with room for every row side by side (core/run/lanes.py); its
    sessions name their row beside their side (`A row1`), for the steps and the log."""

    def lanes_room(self, scenarios: Sequence[Scenario]) -> int:
        return len(scenarios)

    def session(self, scenario: Scenario, label: str, progress: Progress) -> ScriptedSession:
        side = f"{self.side} {scenario.name}"
        return ScriptedSession(scenario, side, self.path, self.script, self.step)


def test_a_row_that_fails_in_its_lane_stops_the_others_and_is_the_runs_error(
    tmp_path: Path,
) -> None:
    rows = tuple(replace(DRAIN, name=f"row{i}") for i in range(3))
    script = Script()
    in_reps = threading.Barrier(3, timeout=60)  # row 1's failure and the other rows' reps

    def step(side: str, rep: int) -> None:
        if (side, rep) == ("B row1", 2):
            in_reps.wait()  # the other rows are in their second reps
            raise RunFailed("row1: B's worker died")
        if rep == 2 and side in ("A row0", "A row2"):
            in_reps.wait()
            while True:
                lane_stop.pause(0.05)  # a rep's wait: only the run stopping ends it

    made = [
        Plan(
            RunConfig(rows, reps=3, label=side, out=tmp_path, save_events=False),
            LanedTarget(side, tmp_path / f"{side}.json", script, step),
        )
        for side in "AB"
    ]
    with pytest.raises(RunFailed, match="row1: B's worker died"):
        run_plans(made, PlainProgress(quiet=True), lanes="auto")
    stops = sorted(line for line in script.log if line.startswith("stop "))
    assert stops == [f"stop {side} row{i}" for side in "AB" for i in range(3)]  # every session
    # Rows 0 and 2 were in their second rep when row 1 failed; none began a third.
    assert {"A row02", "A row22"} <= set(script.log)
    assert not {"A row03", "B row03", "A row23", "B row23"} & set(script.log)
    for side in "AB":
        doc = saved(tmp_path, side)
        assert doc["complete"] is False and doc["error"].startswith("row1: B's worker died")
        assert [s["name"] for s in doc["scenarios"]] == ["row0", "row1", "row2"]
