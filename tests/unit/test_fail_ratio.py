"""`jobbench run --max-fail-ratio`: how many jobs may end badly before the run exits 4."""

from __future__ import annotations

import pytest

from jobbench.commands.run import RunRequest, fail_limit, judge_failures
from jobbench.errors import EXIT_OK, EXIT_RUN_FAILED
from tests.unit.test_compare_gate import doc, steady
from tests.unit.test_gate_correctness import with_jobs


def test_no_job_may_end_badly_by_default_and_any_may_when_faults_are_asked_for() -> None:
    assert fail_limit(RunRequest()) == 0.0
    assert fail_limit(RunRequest(faults=("job-done:500:0.05",))) == 1.0
    assert fail_limit(RunRequest(worker_faults=("kill:1:w0",))) == 1.0
    assert fail_limit(RunRequest(max_fail_ratio=0.1, faults=("job-done:500:0.05",))) == 0.1
    # A ratio out of 0..1 is refused as the flag is read (tests/unit/test_bad_input.py).


def test_a_run_past_the_limit_exits_4_with_one_line_naming_the_share(
    capsys: pytest.CaptureFixture[str],
) -> None:
    failing = with_jobs(doc("flaky", steady(10.0, 2)), failed=51)  # 102 of 1024: 10.0 %
    assert judge_failures(failing, 0.0) == EXIT_RUN_FAILED
    assert capsys.readouterr().err == (
        "jobbench: deep: 102 of 1024 jobs failed (10.0%), over --max-fail-ratio 0\n"
    )
    assert judge_failures(failing, 0.1) == EXIT_OK  # 9.96 % is within 10 %
    assert judge_failures(failing, 0.05) == EXIT_RUN_FAILED
    assert judge_failures(doc("clean", steady(10.0, 2)), 0.0) == EXIT_OK
