"""`<label>.events.jsonl` and signals: a Ctrl-C or SIGTERM while a rep is recorded leaves the
events file holding whole reps, the ones the result has, and comes after; a torn line in a file
written before that is skipped and counted, never a crash."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import jobbench.core.run.loop
import jobbench.results.events_file
from jobbench.core.run.loop import run_plans
from jobbench.core.run.target_seam import Plan
from jobbench.core.scenario.config import RunConfig
from jobbench.errors import Interrupted
from jobbench.procs.signals import sigterm_as_interrupt
from jobbench.render.text.plain_progress import PlainProgress
from jobbench.results.events_file import EventsWriter, read_rep_events
from tests.unit.test_loop import Script, ScriptedTarget, fine
from tests.unit.test_render_run import DRAIN, ENV, drain_rep

SIGNALS = pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])


class SignallingHandle:
    """A file handle that receives `sig` as its first write starts, as a Ctrl-C would land."""

    def __init__(self, handle: Any, sig: int) -> None:
        self.handle, self.sig, self.writes = handle, sig, 0

    def write(self, text: str) -> int:
        self.writes += 1
        if self.writes == 1:
            signal.raise_signal(self.sig)
        return int(self.handle.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.handle, name)


def signal_before(target: Callable[..., Any], sig: int) -> Callable[..., Any]:
    """`target`, receiving `sig` as it starts (once)."""
    fired: list[bool] = []

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not fired:
            fired.append(True)
            signal.raise_signal(sig)
        return target(*args, **kwargs)

    return wrapped


def reps_in(path: Path) -> list[tuple[str, int]]:
    """(scenario, rep) of every line, each of which must be whole JSON."""
    return [(row["scenario"], row["rep"]) for row in map(json.loads, path.read_text().splitlines())]


@SIGNALS
@pytest.mark.parametrize("lands", ["encoding", "writing"])
def test_a_signal_while_a_rep_is_written_comes_after_the_whole_rep(
    tmp_path: Path, sig: int, lands: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = drain_rep(DRAIN, 1)
    writer = EventsWriter(tmp_path / "x.events.jsonl")
    writer.write_rep("s", 1, events)
    if lands == "encoding":
        module = jobbench.results.events_file
        monkeypatch.setattr(module, "rep_lines", signal_before(module.rep_lines, sig))
    else:
        monkeypatch.setattr(writer, "_handle", SignallingHandle(writer._handle, sig))
    with sigterm_as_interrupt(), pytest.raises(KeyboardInterrupt):
        writer.write_rep("s", 2, events)
    writer.close()
    assert reps_in(writer.path) == [("s", 1)] * len(events) + [("s", 2)] * len(events)


@SIGNALS
@pytest.mark.parametrize("lands", ["add_rep", "write_rep"])
def test_a_signal_while_the_loop_records_a_rep_leaves_result_and_events_agreeing(
    tmp_path: Path, sig: int, lands: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobbench.core.run.loop, "environment", lambda runpod: ENV.model_copy())
    if lands == "add_rep":
        monkeypatch.setattr(
            jobbench.core.run.loop, "add_rep", signal_before(jobbench.core.run.loop.add_rep, sig)
        )
    else:
        cls = jobbench.results.events_file.EventsWriter
        monkeypatch.setattr(cls, "write_rep", signal_before(cls.write_rep, sig))
    config = RunConfig((DRAIN,), reps=3, label="A", out=tmp_path, save_events=True)
    path = tmp_path / "A.json"
    plan = Plan(config, ScriptedTarget("A", path, Script(), fine))
    with pytest.raises(Interrupted):
        run_plans([plan], PlainProgress(quiet=True))
    doc = json.loads(path.read_text())
    assert doc["interrupted"] is True and len(doc["scenarios"][0]["reps"]) == 1
    assert set(reps_in(path.with_suffix(".events.jsonl"))) == {(DRAIN.name, 1)}


def test_a_torn_last_line_of_an_older_file_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "old.events.jsonl"
    writer = EventsWriter(path)
    writer.write_rep("s", 1, drain_rep(DRAIN, 1))
    writer.close()
    whole = path.read_bytes()
    rep_2 = whole.replace(b'"rep":1', b'"rep":2')
    path.write_bytes(whole + rep_2[: len(rep_2) // 2] + b'{"ev":"done","worker":"w\xe2\x82')
    rows, skipped = read_rep_events(path, {"s": 1})
    assert len(rows["s"]) == whole.count(b"\n") and skipped == 1


@pytest.mark.parametrize(("every_s", "written"), [(0.0, [1, 2, 3, 3]), (3600.0, [1, 3])])
def test_the_result_is_written_at_most_so_often_with_the_events_of_the_reps_it_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, every_s: float, written: list[int]
) -> None:
    """After the first rep, and at the run's end; between, only once SAVE_EVERY_S has passed.
    Whenever the result is written, its events file holds the same reps."""
    monkeypatch.setattr(jobbench.core.run.loop, "environment", lambda runpod: ENV.model_copy())
    monkeypatch.setattr(jobbench.core.run.loop, "SAVE_EVERY_S", every_s)
    path = tmp_path / "A.json"
    seen: list[tuple[int, set[tuple[str, int]]]] = []
    write = jobbench.core.run.loop.write_document

    def watched(doc: Any, where: Path) -> Path:
        reps = len(doc.scenarios[0].reps)
        seen.append((reps, set(reps_in(path.with_suffix(".events.jsonl")))))
        return write(doc, where)

    monkeypatch.setattr(jobbench.core.run.loop, "write_document", watched)
    config = RunConfig((DRAIN,), reps=3, label="A", out=tmp_path, save_events=True)
    run_plans([Plan(config, ScriptedTarget("A", path, Script(), fine))], PlainProgress(quiet=True))
    assert [reps for reps, _ in seen] == written
    for reps, events in seen:
        assert events == {(DRAIN.name, rep) for rep in range(1, reps + 1)}
    assert len(json.loads(path.read_text())["scenarios"][0]["reps"]) == 3
