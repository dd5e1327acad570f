"""`jobbench run --max-fail-ratio`: how many jobs may end badly before the run exits 4."""

from __future__ import annotations

from jobbench.commands.run import RunRequest, fail_limit
from jobbench.verdict.correctness import over_fail_limit
from tests.unit.test_compare_gate import doc, steady
from tests.unit.test_gate_correctness import with_jobs


def test_no_job_may_end_badly_by_default_and_any_may_when_faults_are_asked_for() -> None:
    assert fail_limit(RunRequest()) == 0.0
    assert fail_limit(RunRequest(faults=("job-done:500:0.05",))) == 1.0
    assert fail_limit(RunRequest(worker_faults=("kill:1:w0",))) == 1.0
    assert fail_limit(RunRequest(max_fail_ratio=0.1, faults=("job-done:500:0.05",))) == 0.1
    # A ratio out of 0..1 is refused as the flag is read (tests/unit/test_bad_input.py).


def test_a_run_past_the_limit_is_one_line_naming_the_share() -> None:
    """The line the run writes on stderr before it exits 4 (tests/e2e/test_cli_failures.py)."""
    failing = with_jobs(doc("flaky", steady(10.0, 2)), failed=51)  # 102 of 1024: 10.0 %
    assert over_fail_limit(failing, 0.0) == (
        "deep: 102 of 1024 jobs failed (10.0%), over --max-fail-ratio 0"
    )
    assert over_fail_limit(failing, 0.1) is None  # 9.96 % is within 10 %
    assert over_fail_limit(failing, 0.05) is not None
    assert over_fail_limit(doc("clean", steady(10.0, 2)), 0.0) is None
