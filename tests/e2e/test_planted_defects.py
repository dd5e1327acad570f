"""`jobbench gate base cand` against defects a real pull request could bring, each planted in
one worker (planted_worker.py, a user command) and run by the real CLI with real worker
processes on scaled-down suites: the gate must fail closed, exit 1 with a reason naming what
the candidate breaks.

Here are the defects the gate judges by a fact: failed jobs (the correctness rule), an uneven
split and a hang (behaviour rules, issue 35). The defects it judges by a measured figure (a
spinning core, a late start, a stall) and the comment-only change it must pass need a quiet
machine and the reps a false-alarm rate asks for: benchmarks/timed/test_gate_timing.py, run by
benchmarks/timed_checks.py."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import run_jobbench

# Every test here judges a gate's verdict, which reps set aside as saturated would change.
pytestmark = pytest.mark.quiet

PLANTED = f"{sys.executable} {Path(__file__).with_name('planted_worker.py')}"
VARIANTS = {
    "base": "",
    "comment-only": "--note 'a comment that changes nothing'",
    "fail": "--defect fail",
    "spin": "--defect spin",
    "late-start": "--defect late-start",
    "stall-on-429": "--defect stall-on-429 --stall-s 1.2",
    "hang-on-429": "--defect stall-on-429 --stall-s 4",  # past the watchdog's 2.8 s give-up
    "greedy": "--defect greedy",
}
# Every suite at scaled-down latencies (--reps auto adds pairs to the suite's reps):
# - a burst of two waves on 2 workers;
# - the gate suite's trickle at a fortieth of its times (the same seeded arrivals, 40 a second
#   for 0.5 s; 50 ms jobs), gated on its pooled mean end-to-end time: at this scale a job that
#   arrives in the few hundred microseconds between a worker's answer and its next take waits
#   a take, a quarter of a job, which a p99 of 20 jobs shows whole. 5 reps to start: a time
#   regression on one row settles at its first look there, at 7 reps when it starts at 3;
# - a burst on one worker whose takes are answered 429 seven times in ten, so nearly every rep
#   meets one mid-burst (a stalled worker's next 429 finds it idle for a second: one stall a
#   time); a side whose reps stall has no outliers, its stalls count in its time, and 7-10 reps
#   a side settle it (5 to start, tests at 5, 7 and 10), with the watchdog's
#   stall bound scaled down too: its 5 s floor would let a 1.2 s stall through, and a bound of
#   0.7 s gives up (4 x) only after 2.8 s, longer than a stall and the 429s around it.
SUITES = """
[suites.burst]
reps = 3
latency = {take = 0.05, wake = 0.005, hold = 2}
scenarios = [{name = "burst", workers = 2, slots = 4, burst = 16, job_seconds = 0.05}]

[suites.trickle]
reps = 5
latency = {take = 0.0125, wake = 0.00125, hold = 2}

[[suites.trickle.scenarios]]
name = "trickle"
workers = 1
slots = 8
load = "poisson:40/s:for:0.5s"
job_seconds = 0.05
metric = "e2e_mean_s"

[suites.rate-limited]
reps = 5
stall_after = 0.7
latency = {take = 0.05, wake = 0.005, hold = 2}
faults = ["job-take-batch:429:0.7"]
scenarios = [{name = "rate-limited", workers = 1, slots = 4, burst = 16, job_seconds = 0.05}]
"""
# A wide threshold for scaled-down figures: a planted defect moves them by far more.
GATE = ("--max-regression", "25%", "--format", "json")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A throwaway jobbench.toml: the planted worker as a variant per defect."""
    variants = "".join(
        f'[variants.{name}]\nworker = "{PLANTED} {args}"\n' for name, args in VARIANTS.items()
    )
    (tmp_path / "jobbench.toml").write_text(variants + SUITES)
    return tmp_path


def gate(
    folder: Path, candidate: str, suite: str, max_reps: int = 8
) -> tuple[int, dict[str, Any], str]:
    """`jobbench gate base CANDIDATE`: its exit code, its comparison and every reason in it."""
    limit = ("--max-reps", str(max_reps))
    result = run_jobbench("gate", "base", candidate, "--suite", suite, *GATE, *limit, cwd=folder)
    assert result.stdout.startswith("{"), result.stderr + result.stdout
    comparison: dict[str, Any] = json.loads(result.stdout)
    reasons = " | ".join([comparison["reason"], *(row["reason"] for row in comparison["rows"])])
    return result.returncode, comparison, reasons


# Failed jobs and an uneven split are settled within 5 reps a side.
@pytest.mark.parametrize(
    ("candidate", "suite", "max_reps", "named"),
    [
        ("fail", "burst", 5, r"fail"),  # 5 % of its jobs fail fast: no slower, and wrong
        ("greedy", "burst", 5, r"(?i)split|uneven|one worker"),
    ],
)
def test_a_planted_defect_fails_the_gate_with_a_reason_naming_it(
    project: Path, candidate: str, suite: str, max_reps: int, named: str
) -> None:
    assert_caught(project, candidate, suite, max_reps, named)


def assert_caught(project: Path, candidate: str, suite: str, max_reps: int, named: str) -> None:
    """The gate fails the candidate (exit 1, regression) with a reason matching `named`."""
    code, comparison, reasons = gate(project, candidate, suite, max_reps)
    assert (code, comparison["verdict"]) == (1, "regression"), reasons
    assert re.search(named, reasons), reasons


def test_a_candidate_whose_worker_hangs_is_a_regression_and_a_baseline_that_hangs_fails(
    project: Path,
) -> None:
    """A worker silent past the watchdog's give-up ends its side's run. The candidate's is its
    behaviour: the gate judges the reps so far (exit 1, naming it); the baseline's leaves
    nothing to judge against (exit 4), as before."""
    code, comparison, reasons = gate(project, "hang-on-429", "rate-limited")
    assert (code, comparison["verdict"]) == (1, "regression"), reasons
    assert "a worker hung past the watchdog's give-up" in reasons, reasons
    assert comparison["rows"][-1]["stopped"] == "B's workers cut its last rep short, ending the run"
    apart = project / "reversed"  # a folder of its own: saved results would stand for names
    apart.mkdir()
    (apart / "jobbench.toml").write_text((project / "jobbench.toml").read_text())
    limit = ("--max-reps", "8")
    result = run_jobbench(
        "gate", "hang-on-429", "base", "--suite", "rate-limited", *GATE, *limit, cwd=apart
    )
    assert result.returncode == 4, result.stderr + result.stdout
    assert "made no take and no job-done" in result.stderr
