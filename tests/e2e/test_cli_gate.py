"""`jobbench gate` as CI runs it: --reps auto settles rows with real model workers, and bad
inputs never pass (exit 2 naming the file and field, exit 3 for an incomplete side)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jobbench.results.model import Result, to_json
from tests.e2e.helpers import run_jobbench
from tests.unit.test_compare_gate import doc, steady

SETTLE_SUITE = """
[suites.settle]
reps = 3
latency = {take = 0.05, wake = 0.005, hold = 2}
scenarios = [{name = "deep", workers = 1, slots = 4, burst = 16, job_seconds = 0.02}]
"""


def gate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_jobbench("gate", *args, cwd=cwd)


# Three reps a side cannot settle anything, however quiet the machine: a fact, not a figure.
def test_reps_auto_stops_at_max_reps_and_says_what_these_reps_could_see(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(SETTLE_SUITE)
    result = gate("main", "main", "--suite", "settle", "--max-reps", "3", cwd=tmp_path)
    assert result.returncode == 3, result.stderr + result.stdout
    assert "--max-reps 3 reached" in result.stdout
    assert "too few for any test" in result.stdout
    assert "overall: inconclusive (not settled: deep)" in result.stdout


def write(path: Path, document: Result | dict[str, Any]) -> str:
    data = to_json(document) if isinstance(document, Result) else document
    path.write_text(json.dumps(data))  # NaN is written as JSON's NaN, as Python reads it
    return str(path)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (float("nan"), "scenario 'deep' rep 2 field time_to_p99_s is nan"),
        (None, "scenario 'deep' rep 2 field time_to_p99_s is None, not a number"),
        # not a number at all: the reader refuses it, naming the field by its path in the file
        ("1.5", "scenarios.0.reps.1.time_to_p99_s: Input should be a valid number"),
    ],
)
def test_a_corrupt_figure_is_exit_2_naming_file_and_field(
    tmp_path: Path, value: object, said: str
) -> None:
    base = write(tmp_path / "base.json", doc("base", steady(10.0, 6)))
    broken = to_json(doc("cand", steady(10.0, 6)))
    broken["scenarios"][0]["reps"][1]["time_to_p99_s"] = value
    cand = write(tmp_path / "cand.json", broken)
    result = gate(base, cand, cwd=tmp_path)
    assert result.returncode == 2, result.stderr + result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert "Traceback" not in result.stderr and len(errors) == 1
    assert errors[0].startswith(f"error: {cand}: {said}")


def test_an_incomplete_side_is_exit_3_with_its_reason(tmp_path: Path) -> None:
    base = write(tmp_path / "base.json", doc("base", steady(10.0, 6)))
    partial = {**to_json(doc("cand", steady(10.0, 6))), "complete": False}
    partial["error"] = "worker w1 died"
    result = gate(base, write(tmp_path / "cand.json", partial), cwd=tmp_path)
    assert result.returncode == 3, result.stderr + result.stdout
    assert "B (cand) is incomplete: worker w1 died" in result.stdout


def test_a_side_whose_reps_are_all_flagged_never_passes(tmp_path: Path) -> None:
    base = write(tmp_path / "base.json", doc("base", steady(10.0, 6)))
    flagged = to_json(doc("cand", steady(10.0, 6)))
    for rep in flagged["scenarios"][0]["reps"]:  # a disturbed measurement: set aside
        rep["anomalies"] = [{"kind": "saturated", "what": "the queue used 0.95 of a core"}]
    result = gate(base, write(tmp_path / "cand.json", flagged), cwd=tmp_path)
    assert result.returncode == 3, result.stderr + result.stdout
    assert "B rep 6 (flagged: saturated)" in result.stdout


@pytest.mark.parametrize(
    "toml",
    [
        "[variants.main\nworker = 'model'\n",  # not TOML
        "[suites.seed]\nscenarios = [{name = 'a'}, {name = 'a'}]\n",  # a name twice
        "[suites.seed]\nmetric = 'speed'\nscenarios = [{name = 'a'}]\n",
        "[variants.x]\nenv = {A = [1]}\n",
    ],
)
def test_a_malformed_jobbench_toml_is_exit_2_for_compare_main_pr_and_gate(
    tmp_path: Path, toml: str
) -> None:
    (tmp_path / "jobbench.toml").write_text(toml)
    for command in (("compare", "main", "pr"), ("gate", "main", "pr")):
        result = run_jobbench(*command, cwd=tmp_path)
        assert result.returncode == 2, result.stderr + result.stdout
        assert result.stderr.startswith("error: ") and "jobbench.toml" in result.stderr
        assert not (tmp_path / "reports").exists()
