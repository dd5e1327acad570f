"""A `--worker "CMD"` runs as many jobs at once as its own code does, which jobbench cannot
know: such a command must be given --slots (or `slots` in its suite row), never the default 32
that fits the runpod SDK and model workers (docs/workers.md). In this process: every refusal
comes before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobbench.commands.run import RunRequest, plan_run
from jobbench.core.scenario.project import BUILTIN_SUITES, apply_variant, load_project
from jobbench.errors import EXIT_USAGE, UsageError
from jobbench.workers.policies import DEFAULT_SLOTS
from tests.unit.cli import run_cli

COMMAND = "python my_handler.py"
SAID = (
    "error: --slots: a --worker command's concurrency is unknown; say how many jobs one process "
    "runs at once, e.g. --slots 1 for a plain sync handler"
)


@pytest.fixture(autouse=True)
def in_a_folder_with_the_handler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's script exists where jobbench runs (a missing one is refused first)."""
    (tmp_path / "my_handler.py").write_text("")
    monkeypatch.chdir(tmp_path)


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line, no traceback
    return err.strip()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--worker", COMMAND, "--burst", "4"],
        ["workers", "--server", "http://127.0.0.1:9", "--worker", COMMAND],
        ["locust", "--headless", "--worker", COMMAND],
    ],
    ids=["run", "workers", "locust"],
)
def test_a_command_worker_without_slots_is_a_usage_error_before_anything_starts(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
) -> None:
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == EXIT_USAGE
    assert one_line(capsys) == SAID
    assert [p.name for p in tmp_path.iterdir()] == ["my_handler.py"]  # no reports/, nothing written


def test_a_command_worker_runs_the_slots_it_was_given() -> None:
    plan = plan_run(RunRequest(worker=COMMAND, slots=1, burst=4))
    (scenario,) = plan.config.scenarios
    assert scenario.slots == 1 and scenario.worker.kind == "command"


@pytest.mark.parametrize("worker", ["runpod", "model"])
def test_runpod_and_model_workers_keep_the_default_slots(worker: str) -> None:
    (scenario,) = plan_run(RunRequest(worker=worker, burst=4)).config.scenarios
    assert scenario.slots == DEFAULT_SLOTS == 32


SUITE = """
[variants.mine]
worker = "python my_handler.py"

[suites.s]
reps = 3
scenarios = [
  {{name = "a", workers = 1, burst = 8, job_seconds = 0.5{slots}}},
]
"""


def test_a_suite_row_without_slots_cannot_run_a_command_variant(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE.format(slots=""))
    project = load_project(tmp_path)
    suite, variant = project.suites["s"], project.variants["mine"]
    with pytest.raises(UsageError) as refused:
        apply_variant(suite, variant)
    assert str(refused.value) == (
        f"{tmp_path / 'jobbench.toml'} suites.s: scenario a: slots: variant mine runs a command "
        "whose concurrency is unknown; give the row slots = N (how many jobs one process runs at "
        "once), e.g. slots = 1 for a plain sync handler"
    )
    # the same row runs the model variants with the default
    (scenario,) = apply_variant(suite, project.variants["main"])
    assert scenario.slots == DEFAULT_SLOTS


def test_a_suite_row_with_slots_runs_a_command_variant(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE.format(slots=", slots = 2"))
    project = load_project(tmp_path)
    (scenario,) = apply_variant(project.suites["s"], project.variants["mine"])
    assert scenario.slots == 2 and scenario.worker.command == COMMAND


def test_the_seed_suite_asks_for_a_suite_of_ones_own_for_a_command_variant(
    tmp_path: Path,
) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE.format(slots=""))
    variant = load_project(tmp_path).variants["mine"]
    with pytest.raises(UsageError, match=r"run a suite of jobbench\.toml whose rows give slots"):
        apply_variant(BUILTIN_SUITES["seed"], variant)


def test_compare_refuses_a_command_variant_on_rows_without_slots_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE.format(slots=""))
    code = run_cli(monkeypatch, "compare", "main", "mine", "--suite", "s", cwd=tmp_path)
    assert code == EXIT_USAGE
    line = one_line(capsys)
    assert line.startswith("error: ") and "variant mine runs a command" in line, line
    assert "slots = 1 for a plain sync handler" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobbench.toml", "my_handler.py"]
