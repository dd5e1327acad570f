"""The planted worker's project for `jobbench gate base cand` (tests/e2e/test_planted_defects.py,
tests/e2e/test_planted_failures.py, benchmarks/timed/test_gate_timing.py): each defect one
pull request could bring, planted in one worker (planted_worker.py, a user command) as a
variant, and the suites it is gated on, at scaled-down latencies."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import run_jobbench

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


def assert_caught(project: Path, candidate: str, suite: str, max_reps: int, named: str) -> None:
    """The gate fails the candidate (exit 1, regression) with a reason matching `named`."""
    code, comparison, reasons = gate(project, candidate, suite, max_reps)
    assert (code, comparison["verdict"]) == (1, "regression"), reasons
    assert re.search(named, reasons), reasons
