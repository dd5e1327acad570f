"""Lanes and the exit paths: Ctrl-C, SIGTERM and a SIGKILLed jobbench leave nothing running
while a suite's rows run side by side, and both sides' results so far stay saved. A file of its
own so these long tests go to a test worker apart from the other lanes tests. Loopback only."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_cleanup_signals import (
    BOTH,
    STOP_S,
    assert_nothing_left,
    groups_of,
    jobbench,
    saved,
    stop,
)

SUITE = """
[suites.long]
# Two reps to a row's first look: on a busy machine lanes turn off and the rows take turns, so
# the second row's rep 2 waits for the first row's pairs up to that look, four more at 5 reps.
reps = 2
latency = {take = 0.05, wake = 0.005, hold = 2}
# Two slots and 48 jobs: a rep lasts seconds, so a signal lands while both rows run one.
scenarios = [
  {name = "x", workers = 1, slots = 2, burst = 48, job_seconds = 0.05},
  {name = "y", workers = 1, slots = 2, burst = 48, job_seconds = 0.05},
]
"""


@BOTH
def test_a_signal_while_lanes_run_stops_every_row_and_saves_both_sides(
    tmp_path: Path, sig: int
) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE)
    with jobbench("gate", "main", "pr", "--suite", "long", cwd=tmp_path) as (proc, _, stderr):
        stderr.wait_for("main x: rep 2/")
        stderr.wait_for("main y: rep 2/")
        groups = groups_of(proc)
        assert len(groups) == 9  # two rows x two sides x (a queue, a worker), the orphan guard
        stop(proc, sig)
        assert proc.returncode == 130, stderr
        assert_nothing_left(tmp_path, groups)
    for side in ("main", "pr"):
        doc, events = saved(tmp_path / "reports" / f"{side}.json")
        assert doc["complete"] is False and doc["interrupted"] is True
        names = [s["name"] for s in doc["scenarios"]]  # type: ignore[union-attr]
        assert names == ["x", "y"]
        assert events >= {1}  # each row's first pair was saved before the signal


def test_a_sigkilled_gate_with_lanes_leaves_its_guard_to_stop_every_row(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE)
    with jobbench("gate", "main", "pr", "--suite", "long", cwd=tmp_path) as (proc, _, stderr):
        stderr.wait_for("main x: rep 2/")
        stderr.wait_for("main y: rep 2/")
        groups = groups_of(proc)
        assert len(groups) == 9
        proc.kill()
        proc.wait(STOP_S)
        assert_nothing_left(tmp_path, groups, timeout_s=STOP_S)
    doc, _ = saved(tmp_path / "reports" / "main.json")
    assert doc["complete"] is False
