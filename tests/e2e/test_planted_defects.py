"""`jobbench gate base cand` against a defect a real pull request could bring, planted in one
worker (tests/e2e/planted_project.py) and run by the real CLI with real worker processes on
scaled-down suites: the gate must fail closed, exit 1 with a reason naming what the candidate
breaks.

Here is the defect judged by a figure of the reps that count: an uneven split (a behaviour
rule). The defects judged by a fact, failed jobs and a hang, need no quiet machine:
tests/e2e/test_planted_failures.py. Those judged by a measured time or CPU (a spinning core, a
late start, a stall) and the comment-only change it must pass need the reps a false-alarm rate
asks for: benchmarks/timed/test_gate_timing.py, run by benchmarks/timed_checks.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e import planted_project as planted

project = planted.project  # the planted variants' jobbench.toml, a fixture here too


# How evenly the jobs spread over the workers is compared like the latency, over the reps that
# count: a rep the tests beside it fill is set aside as saturated, and the split with it.
@pytest.mark.quiet
def test_a_greedy_worker_fails_the_gate_for_its_uneven_split(project: Path) -> None:
    """Settled within 5 reps a side."""
    planted.assert_caught(project, "greedy", "burst", 5, r"(?i)split|uneven|one worker")
