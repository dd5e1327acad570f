"""Lanes end to end: `compare` and `gate` run a suite's rows side by side, each row with its own
queues and model worker processes, its sides interleaved; the results hold every row in the
suite's order and each rep says how many rows ran beside it. Loopback only."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.helpers import run_jobbench

SUITE = """
[suites.rows]
# Two reps: the sides' alternation within a row (A's rep n, B's rep n, A's rep n + 1) shows.
reps = 2
latency = {take = 0.05, wake = 0.005, hold = 2}
scenarios = [
  {name = "a-deep", workers = 1, slots = 8, burst = 32, job_seconds = 0.05},
  {name = "b-two", workers = 2, slots = 4, burst = 32, job_seconds = 0.05},
  {name = "c-shallow", workers = 1, slots = 8, burst = 8, job_seconds = 0.05},
]

# Two rows show one lane taking them in turn.
[suites.pair]
reps = 1
latency = {take = 0.05, wake = 0.005, hold = 2}
scenarios = [
  {name = "a-deep", workers = 1, slots = 8, burst = 32, job_seconds = 0.05},
  {name = "c-shallow", workers = 1, slots = 8, burst = 8, job_seconds = 0.05},
]
"""
ROWS = ["a-deep", "b-two", "c-shallow"]
PAIR = ["a-deep", "c-shallow"]


def test_compare_runs_the_rows_side_by_side_and_saves_them_in_the_suites_order(
    tmp_path: Path,
) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE)
    done = run_jobbench(
        "compare", "main", "pr", "--suite", "rows", "--format", "json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "3 lanes: the 3 rows run side by side" in done.stderr
    comparison = json.loads(done.stdout)
    assert [row["scenario"] for row in comparison["rows"]] == ROWS
    for side in ("main", "pr"):
        doc = json.loads((tmp_path / "reports" / f"{side}.json").read_text())
        assert doc["complete"] is True and [s["name"] for s in doc["scenarios"]] == ROWS
        for scenario in doc["scenarios"]:
            reps = scenario["reps"]
            assert len(reps) == 2 and all(rep["jobs"]["completed"] == rep["jobs"]["submitted"]
                                          for rep in reps)  # fmt: skip
            assert all(1 <= rep["lanes"] <= 3 for rep in reps)
        events = (tmp_path / "reports" / f"{side}.events.jsonl").read_text().splitlines()
        kept = {(json.loads(line)["scenario"], json.loads(line)["rep"]) for line in events}
        assert kept == {(row, rep) for row in ROWS for rep in (1, 2)}
    # Within a row the sides still alternate: A's rep n before B's rep n before A's n + 1.
    for row in ROWS:
        order = [line.split(":")[0] for line in done.stderr.splitlines()
                 if line.startswith(("main ", "pr ")) and f" {row}: rep " in line]  # fmt: skip
        assert order == [f"main {row}", f"pr {row}"] * 2, order


def test_one_lane_runs_the_rows_one_after_the_other(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE)
    done = run_jobbench("compare", "main", "pr", "--suite", "pair", "--lanes", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "lanes:" not in done.stderr
    started = [line.split(":")[0] for line in done.stderr.splitlines() if ": rep 1/" in line]
    assert started == [f"{side} {row}" for row in PAIR for side in ("main", "pr")]
    doc = json.loads((tmp_path / "reports" / "main.json").read_text())
    assert all("lanes" not in scenario["reps"][0] for scenario in doc["scenarios"])


def test_lanes_is_checked_before_anything_runs(tmp_path: Path) -> None:
    done = run_jobbench("gate", "main", "pr", "--lanes", "0", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("error: --lanes 0: must be a whole")
    assert not (tmp_path / "reports").exists() or not any((tmp_path / "reports").iterdir())


def test_two_lanes_run_three_rows_two_at_a_time(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE)
    done = run_jobbench(
        "gate", "main", "main", "--suite", "rows", "--lanes", "2", "--reps", "1",
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    comparison = json.loads(done.stdout)
    assert [row["scenario"] for row in comparison["rows"]] == ROWS
    assert "2 lanes: the 3 rows run 2 at a time" in done.stderr
    assert done.returncode in (0, 3), done.stderr  # an A/A: never a regression on 1 rep
    doc = json.loads((tmp_path / "reports" / "main.json").read_text())
    assert max(rep["lanes"] for s in doc["scenarios"] for rep in s["reps"]) <= 2
