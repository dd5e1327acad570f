"""`jobbench gate base cand` against the defects it judges by a fact, planted in one worker
(tests/e2e/planted_project.py): jobs that fail and a worker that hangs. The gate must fail
closed, exit 1 with a reason naming what the candidate breaks.

A fact counts in every rep, a rep set aside as a disturbed measurement too (results/
correctness.py, verdict/behaviour.py): these run beside other tests, where most reps are set
aside as saturated, and their verdicts must not change."""

from __future__ import annotations

from pathlib import Path

from tests.e2e import planted_project as planted
from tests.e2e.helpers import run_jobbench

project = planted.project  # the planted variants' jobbench.toml, a fixture here too


def test_a_worker_that_fails_jobs_fails_the_gate_naming_them(project: Path) -> None:
    """5 % of its jobs fail fast: no slower, and wrong. Settled within 5 reps a side."""
    planted.assert_caught(project, "fail", "burst", 5, r"fail")


def test_a_candidate_whose_worker_hangs_is_a_regression_and_a_baseline_that_hangs_fails(
    project: Path,
) -> None:
    """A worker silent past the watchdog's give-up ends its side's run. The candidate's is its
    behaviour: the gate judges the reps so far (exit 1, naming it); the baseline's leaves
    nothing to judge against (exit 4), as before."""
    code, comparison, reasons = planted.gate(project, "hang-on-429", "rate-limited")
    assert (code, comparison["verdict"]) == (1, "regression"), reasons
    assert "a worker hung past the watchdog's give-up" in reasons, reasons
    assert comparison["rows"][-1]["stopped"] == "B's workers cut its last rep short, ending the run"
    apart = project / "reversed"  # a folder of its own: saved results would stand for names
    apart.mkdir()
    (apart / "jobbench.toml").write_text((project / "jobbench.toml").read_text())
    limit = ("--max-reps", "8")
    result = run_jobbench(
        "gate", "hang-on-429", "base", "--suite", "rate-limited", *planted.GATE, *limit, cwd=apart
    )
    assert result.returncode == 4, result.stderr + result.stdout
    assert "made no take and no job-done" in result.stderr
