"""The faults a scenario runs with, as flags and as TOML (core/scenario/faults.py,
core/scenario/project.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobbench.core.scenario.build import build_scenario
from jobbench.core.scenario.config import Scenario
from jobbench.core.scenario.faults import WorkerFault, parse_worker_fault, queue_faults
from jobbench.core.scenario.project import apply_variant, load_project
from jobbench.errors import UsageError


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("kill:2", WorkerFault("kill", 2.0)),
        ("kill:0.5:w3", WorkerFault("kill", 0.5, worker=3)),
        ("pause:1.5:10", WorkerFault("pause", 1.5, 10.0)),
        ("pause:0:2:w1", WorkerFault("pause", 0.0, 2.0, 1)),
    ],
)
def test_worker_faults_read_as_written(text: str, fault: WorkerFault) -> None:
    assert parse_worker_fault(text) == fault
    assert parse_worker_fault(fault.describe()) == fault


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("stop:2", "unknown action 'stop'"),
        ("kill", "write kill:AT"),
        ("pause:2", "write kill:AT"),
        ("kill:-1", "AT must be seconds >= 0"),
        ("kill:nan", "AT must be seconds >= 0"),
        ("pause:1:0", "FOR must be > 0"),
        ("kill:1:worker2", "the worker is w0, w1"),
    ],
)
def test_a_bad_worker_fault_names_the_flag_and_the_spelling(text: str, says: str) -> None:
    with pytest.raises(UsageError, match="--worker-fault") as caught:
        parse_worker_fault(text)
    assert says in str(caught.value)


def test_a_worker_fault_on_a_worker_the_fleet_lacks_is_refused() -> None:
    with pytest.raises(UsageError, match="no worker w4 in a fleet of 4"):
        build_scenario(name="s", workers=4, worker_faults=(WorkerFault("kill", 1, 0, 4),))


def test_queue_faults_are_checked_and_written_one_way() -> None:
    assert queue_faults(["job-done:500:0.10", "status:delay=0.20:1"]) == (
        "job-done:500:0.1",
        "status:delay=0.2:1",
    )
    with pytest.raises(UsageError, match=r"--fault 'job-done:oops:0\.1': KIND must be"):
        queue_faults(["job-done:oops:0.1"])


def test_faults_only_enter_params_when_set() -> None:
    assert "faults" not in Scenario("s").params()  # old results still pair with new clean ones
    faulted = Scenario("s", faults=("job-done:drop:0.05",), worker_faults=(WorkerFault("kill", 1),))
    assert faulted.params()["faults"] == ["job-done:drop:0.05"]
    assert faulted.params()["worker_faults"] == ["kill:1:w0"]


def test_suites_rows_and_variants_add_their_faults(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(
        """
[variants.flaky]
worker = "model"
faults = ["job-done:500:0.1"]

[suites.chaos]
faults = ["job-done:drop:0.05"]
scenarios = [
  {name = "calm", workers = 2, burst = 64},
  {name = "storm", workers = 2, burst = 64, worker_faults = ["pause:1:5:w1"]},
]
"""
    )
    project = load_project(tmp_path)
    calm, storm = apply_variant(project.suites["chaos"], project.variants["flaky"])
    assert calm.faults == ("job-done:drop:0.05", "job-done:500:0.1")
    assert storm.worker_faults == (WorkerFault("pause", 1.0, 5.0, 1),)


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('faults = "job-done:drop:0.05"', "faults must be a list of strings"),
        ('faults = ["job-done:drop:2"]', "RATE must be in [0, 1]"),
        ('worker_faults = ["kill:1:w9"]', "no worker w9 in a fleet of 2"),
    ],
)
def test_a_bad_fault_in_toml_names_the_file_and_field(tmp_path: Path, toml: str, says: str) -> None:
    (tmp_path / "jobbench.toml").write_text(
        f'[suites.chaos]\n{toml}\nscenarios = [{{name = "a", workers = 2, burst = 8}}]\n'
    )
    with pytest.raises(UsageError, match=r"jobbench\.toml") as caught:
        load_project(tmp_path)
    assert says in str(caught.value)


def test_a_term_worker_fault_reads_as_the_platforms_stop() -> None:
    from jobbench.core.scenario.faults import parse_worker_fault

    fault = parse_worker_fault("term:1.5:w2")
    assert (fault.action, fault.at_s, fault.worker) == ("term", 1.5, 2)
    assert fault.describe() == "term:1.5:w2"
