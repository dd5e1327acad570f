"""jobbench.toml: a value of the wrong type is a usage error naming the file, the key and a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobbench.errors import UsageError
from jobbench.project import load_project
from tests.e2e.helpers import run_jobbench

SUITE = """
[suites.s]
reps = {reps}
scenarios = [{{name = "a", workers = {workers}, burst = 8, job_seconds = {job_seconds}}}]

[variants.v]
worker = "model"
policy = "take-ahead"
take_ahead = {take_ahead}
"""
GOOD = {"reps": "3", "workers": "2", "job_seconds": "0.5", "take_ahead": "4"}


def write(folder: Path, **changes: str) -> Path:
    (folder / "jobbench.toml").write_text(SUITE.format(**{**GOOD, **changes}))
    return folder


def test_well_typed_values_load(tmp_path: Path) -> None:
    project = load_project(write(tmp_path, workers="2.0"))  # a whole float is a whole number
    assert project.suites["s"].reps == 3 and project.suites["s"].scenarios[0].workers == 2
    assert project.variants["v"].worker.take_ahead == 4


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("workers", '"four"', "suites.s: scenario 1: workers = 'four' is not a whole number"),
        ("workers", "2.5", "workers = 2.5 is not a whole number; write e.g. workers = 4"),
        ("job_seconds", '"slow"', "job_seconds = 'slow' is not a number of seconds"),
        ("reps", "true", "suites.s: reps = True is not a whole number; write e.g. reps = 5"),
        ("take_ahead", '"lots"', "variants.v: take_ahead = 'lots' is not a whole number"),
    ],
)
def test_a_value_of_the_wrong_type_names_file_key_and_fix(
    tmp_path: Path, key: str, value: str, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        load_project(write(tmp_path, **{key: value}))
    assert str(caught.value).startswith(str(tmp_path / "jobbench.toml"))
    assert message in str(caught.value)


def test_gate_exits_2_not_1_on_a_bad_config(tmp_path: Path) -> None:
    done = run_jobbench("gate", "main", "pr", cwd=write(tmp_path, workers='"four"'))
    assert done.returncode == 2 and "workers = 'four'" in done.stderr
    assert "Traceback" not in done.stderr
