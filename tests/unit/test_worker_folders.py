"""Each worker's own folder (workers/kinds.py): HOME and temp folder for every kind, and a user
command that still means what the user typed when it runs from there. No process starts."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from jobbench.workers.kinds import command_argv, worker_folder, worker_process_spec
from jobbench.workers.spec import WorkerSpec

KINDS = [
    WorkerSpec("model", "drain"),
    WorkerSpec("runpod"),
    WorkerSpec("command", command="python handler.py"),
]


def spec_in(tmp_path: Path, spec: WorkerSpec) -> tuple[Path, list[str], dict[str, str]]:
    folder = worker_folder(tmp_path / "workdir", "w0")
    argv, env = worker_process_spec(spec, "w0", "http://127.0.0.1:1/v2/local", 4, None, folder)
    return folder, argv, env


@pytest.mark.parametrize("spec", KINDS, ids=lambda spec: spec.kind)
def test_every_kind_gets_home_and_temp_folders_of_its_own(
    tmp_path: Path, spec: WorkerSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONUSERBASE", raising=False)
    folder, _, env = spec_in(tmp_path, spec)
    assert folder == tmp_path / "workdir" / "w0"
    assert (folder / "home").is_dir() and (folder / "tmp").is_dir()
    assert env["HOME"] == str(folder / "home")
    assert env["TMPDIR"] == env["TMP"] == env["TEMP"] == str(folder / "tmp")
    assert env["PYTHONUSERBASE"]  # `pip install --user` packages: still under the real HOME


def test_a_variants_env_still_sets_what_it_names(tmp_path: Path) -> None:
    spec = WorkerSpec("model", "drain", env=(("HOME", "/srv/models"),))
    folder, _, env = spec_in(tmp_path, spec)
    assert env["HOME"] == "/srv/models" and env["TMPDIR"] == str(folder / "tmp")


def test_a_variant_may_set_the_sdks_log_level_but_not_where_the_queue_is(tmp_path: Path) -> None:
    wiring = (("RUNPOD_LOG_LEVEL", "ERROR"), ("RUNPOD_POD_ID", "mine"), ("JOBBENCH_SLOTS", "99"))
    _, _, env = spec_in(tmp_path, WorkerSpec("runpod", env=wiring))
    assert env["RUNPOD_LOG_LEVEL"] == "ERROR"  # as examples/jobbench.toml sets it
    assert env["RUNPOD_POD_ID"] == "w0" and env["JOBBENCH_SLOTS"] == "4"


@pytest.mark.parametrize(
    "spec",
    [WorkerSpec("runpod", take_ahead=8), WorkerSpec("model", "take-ahead", take_ahead=8)],
    ids=lambda spec: spec.kind,
)
def test_take_ahead_reaches_a_worker_under_one_name(tmp_path: Path, spec: WorkerSpec) -> None:
    """JOBBENCH_TAKE_AHEAD alone: runpod_entry.py hands it to the SDK as its take_ahead key."""
    _, _, env = spec_in(tmp_path, spec)
    assert env["JOBBENCH_TAKE_AHEAD"] == "8"
    assert [name for name in env if "TAKE_AHEAD" in name] == ["JOBBENCH_TAKE_AHEAD"]


def test_the_sdk_worker_hands_slots_and_take_ahead_to_the_sdk_from_those_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from jobbench.workers.runpod_entry import config_from_env

    monkeypatch.setenv("JOBBENCH_SLOTS", "4")
    monkeypatch.setenv("JOBBENCH_TAKE_AHEAD", "8")
    config = config_from_env()
    assert config["concurrency_modifier"](1) == 4 and config["take_ahead"] == 8


def test_the_sdk_worker_also_sets_the_sdks_own_variable_unless_a_variant_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from jobbench.workers.runpod_entry import export_sdk_take_ahead

    monkeypatch.setenv("JOBBENCH_TAKE_AHEAD", "8")
    monkeypatch.delenv("RUNPOD_TAKE_AHEAD", raising=False)
    export_sdk_take_ahead()
    assert os.environ["RUNPOD_TAKE_AHEAD"] == "8"
    monkeypatch.setenv("RUNPOD_TAKE_AHEAD", "3")  # a variant's env wins
    export_sdk_take_ahead()
    assert os.environ["RUNPOD_TAKE_AHEAD"] == "3"
    monkeypatch.setenv("JOBBENCH_TAKE_AHEAD", "0")
    monkeypatch.delenv("RUNPOD_TAKE_AHEAD")
    export_sdk_take_ahead()
    assert "RUNPOD_TAKE_AHEAD" not in os.environ


def test_a_commands_relative_paths_are_read_against_the_folder_it_was_typed_in(
    tmp_path: Path,
) -> None:
    for name in ("handler.py", "run.sh", "data", "pkg"):
        (tmp_path / name).touch()
    words = ["./run.sh", "handler.py", "--config", "data", "-m", "pkg", "missing.txt", "/abs"]
    assert command_argv(words, tmp_path) == [
        str(tmp_path / "run.sh"),  # a program given as a path
        str(tmp_path / "handler.py"),
        "--config",  # options stay
        str(tmp_path / "data"),
        "-m",
        "pkg",  # a module name, not a path
        "missing.txt",  # names nothing there: left as it is
        "/abs",
    ]
    assert command_argv(["python", "handler.py"], tmp_path)[0] == "python"  # found on PATH


def test_a_command_runs_from_its_folder_with_the_users_folder_importable_for_python_m(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "handler.py").touch()
    monkeypatch.chdir(user)
    _, argv, env = spec_in(tmp_path, WorkerSpec("command", command="python handler.py"))
    assert argv == ["python", str(user / "handler.py")] and "PYTHONPATH" not in env
    _, argv, env = spec_in(tmp_path, WorkerSpec("command", command="python -m handler"))
    assert argv == ["python", "-m", "handler"] and env["PYTHONPATH"] == str(user)


def test_a_relative_python_for_the_sdk_is_read_against_the_users_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _, argv, _ = spec_in(tmp_path, WorkerSpec("runpod", python="venv/bin/python"))
    assert argv[0] == str(tmp_path / "venv" / "bin" / "python")
    _, argv, _ = spec_in(tmp_path, WorkerSpec("runpod"))
    assert argv[0] == sys.executable and os.path.isabs(argv[1])
