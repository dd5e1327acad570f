"""The gate's verdicts that rest on measured figures, each on real worker processes at scaled-down
latencies: planted defects judged by time or CPU (tests/e2e/planted_worker.py, the suites of
tests/e2e/planted_project.py), a comment-only change that must pass, and `--reps auto`
settling a real slowdown. Each needs the machine to itself and the reps its share of the
false-alarm rate asks for, so they run here, one at a time (benchmarks/timed_checks.py), not in
the suite; the gate's rules themselves are unit-tested in tests/unit/test_compare_gate.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobbench.verdict.decision import look_number
from tests.e2e import planted_project as planted
from tests.e2e import test_cli_gate as cli_gate

project = planted.project  # the planted variants' jobbench.toml, a fixture here too


@pytest.mark.parametrize(
    ("candidate", "suite", "max_reps", "named"),
    [
        # a core busy for nothing: a check of the workers' own CPU, whose share of the false
        # alarm rate (a fifth, over five checks) fully separated reps reach at 10 a side
        ("spin", "burst", 12, r"(?i)cpu"),
        ("late-start", "trickle", 8, r"slower in trickle"),
        # 14: a baseline that stalls once in 10 reps (seen on a CI run) leaves 9 of 10 short
        # of its level; a rep only runs while the row is unsettled
        ("stall-on-429", "rate-limited", 14, r"(?i)stall"),
    ],
)
def test_a_planted_defect_judged_by_a_figure_fails_the_gate_naming_it(
    project: Path,
    candidate: str,
    suite: str,
    max_reps: int,
    named: str,
) -> None:
    planted.assert_caught(project, candidate, suite, max_reps, named)


def test_a_comment_only_change_passes_the_burst_and_the_trickle(
    project: Path,
) -> None:
    for suite in ("burst", "trickle"):
        code, comparison, reasons = planted.gate(project, "comment-only", suite)
        assert (code, comparison["verdict"]) == (0, "pass"), reasons


def test_reps_auto_adds_pairs_until_a_real_slowdown_is_settled(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(cli_gate.SETTLE_SUITE)
    # B = main (drain) against A = pr (take-ahead): B takes a whole take latency more a batch
    result = cli_gate.gate("pr", "main", "--suite", "settle", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr + result.stdout
    (row,) = json.loads(result.stdout)["rows"]
    # tests at 3, 5, 7, 10 reps; test k may spend 0.8 % / (k (k + 1)): 7 fully separated reps
    # a side are the first that reach it (1 / 3432 < 0.8 % / 12 at the third test, where 5
    # reps give 1 / 252 > 0.8 % / 6); a rep set aside as an outlier costs one point
    assert "deep: unsettled after 3 reps a side" in result.stderr
    assert "next test at 5 reps" in result.stderr
    reps = row["reps"]["baseline"]
    assert reps in (7, 10) and row["reps"]["candidate"] == reps
    assert row["stopped"] == f"settled (regression) after {reps} reps a side"
    looks = look_number(reps, 3)
    speed = 0.01 * 0.8  # the speed tests' share of the call's 1 % (the checks keep a fifth)
    assert row["looks"] == looks and row["alpha"] == pytest.approx(speed / (looks * (looks + 1)))
    assert row["verdict"] == "regression"
    order = [line.split(":")[0] for line in result.stderr.splitlines() if ": rep " in line]
    assert order[-2:] == ["pr deep", "main deep"]  # the added pairs stay interleaved
