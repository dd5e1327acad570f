"""The `fixes` table on real model-worker processes (docs/fixes.md): a suite that names its
variants runs them beside compare's two sides, each its own processes and result, and the table
sets them side by side. One scaled-down row, one rep, five variants (under 10 s): the suite's
wiring, not its figures (those are the simulator's, tests/unit/test_fixes_suite.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.helpers import run_jobbench

SUITE = """
[suites.tiny-fixes]
reps = 1
latency = {take = 0.05, wake = 0.005, hold = 2}
variants = ["main", "pr", "job-cache", "server-fix", "server-extra"]
scenarios = [{name = "deep", workers = 1, slots = 4, burst = 16, job_seconds = 0.02}]
"""


def test_every_variant_of_the_suite_runs_for_real_and_shows_on_one_table(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE)
    args = ("compare", "main", "pr", "--suite", "tiny-fixes", "--format", "markdown")
    result = run_jobbench(*args, cwd=tmp_path, timeout_s=60)
    assert result.returncode == 0, result.stderr
    header = "| scenario | figure | main | pr | job-cache | server-fix | server-extra |"
    assert header in result.stdout
    assert "| deep | time to 99 % |" in result.stdout
    reports = tmp_path / "reports"
    for name in ("main", "pr", "job-cache", "server-fix", "server-extra"):
        doc = json.loads((reports / f"{name}.json").read_text())
        assert doc["target"]["kind"] == "fake" and doc["complete"], name
        assert doc["scenarios"][0]["reps"][0]["jobs"]["completed"] == 16, name
    server = json.loads((reports / "server-fix.json").read_text())["scenarios"][0]
    assert server["params"]["latency"]["take"] == 0.03  # the variant's server fix, on the queue
    assert "take_extra" not in server["params"]["latency"]
    # The other half: the queue handed the drain worker's takes more than they asked.
    extra = json.loads((reports / "server-extra.json").read_text())["scenarios"][0]
    assert extra["params"]["latency"]["take_extra"] == 32
    assert extra["params"]["latency"]["take"] == 0.05  # the suite's own take
    takes = extra["reps"][0]["takes"]
    assert takes["got_mean"] > takes["asked_mean"]
    assert (reports / "main-vs-pr.tiny-fixes.md").read_text().count("| deep |") >= 2
