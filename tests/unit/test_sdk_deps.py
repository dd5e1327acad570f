"""What an SDK checkout declares it depends on (core/sdk/deps.py), in the layouts runpod-python
used over its history: setup.cfg (0.9), requirements.txt behind a dynamic pyproject.toml (1.x)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobbench.core.sdk.deps import declared_dependencies
from jobbench.core.sdk.env import with_sdk_env
from jobbench.errors import UsageError
from jobbench.workers.spec import WorkerSpec

DYNAMIC = '[project]\nname = "runpod"\ndynamic = ["version", "dependencies"]\n'
REQUIREMENTS = """aiohttp[speedups] >= 3.9.3
aiohttp-retry >= 2.8.3

backoff >= 2.2.1  # retries
# the lock for .runpod_jobs.pkl
filelock >= 3.19.1
"""
SETUP_CFG = """[metadata]
name = runpod

[options]
packages = find:
install_requires =
    pillow >= 9.3.0
    requests >= 2.28.1
"""


def test_requirements_behind_a_dynamic_pyproject_are_read_without_comments(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text(DYNAMIC)
    (tmp_path / "requirements.txt").write_text(REQUIREMENTS)
    deps = declared_dependencies(tmp_path)
    assert deps is not None and deps.source == tmp_path / "requirements.txt"
    assert deps.lines == (
        "aiohttp[speedups] >= 3.9.3",
        "aiohttp-retry >= 2.8.3",
        "backoff >= 2.2.1",
        "filelock >= 3.19.1",
    )
    assert deps.count == 4


def test_setup_cfg_comes_before_requirements_as_setuptools_reads_it(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text(SETUP_CFG)
    (tmp_path / "requirements.txt").write_text("pillow == 9.3.0\n")
    deps = declared_dependencies(tmp_path)
    assert deps is not None and deps.source.name == "setup.cfg"
    assert deps.lines == ("pillow >= 9.3.0", "requests >= 2.28.1")


def test_static_pyproject_dependencies_come_first(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["aiohttp>=3.14"]\n')
    (tmp_path / "requirements.txt").write_text("-e .\n--index-url https://example.invalid\n")
    deps = declared_dependencies(tmp_path)
    assert deps is not None and deps.lines == ("aiohttp>=3.14",)


def test_option_lines_are_kept_but_not_counted(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("--prefer-binary\naiohttp\n")
    deps = declared_dependencies(tmp_path)
    assert deps is not None and deps.lines == ("--prefer-binary", "aiohttp") and deps.count == 1


def test_a_checkout_that_declares_nothing_runs_on_jobbenchs_python(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(DYNAMIC)  # dynamic, and no requirements.txt
    assert declared_dependencies(tmp_path) is None
    said: list[str] = []
    spec = WorkerSpec("runpod", sdk_path=tmp_path)
    assert with_sdk_env(spec, said.append) == spec
    assert said == [
        f"--sdk {tmp_path}: no pyproject.toml, setup.cfg or requirements.txt lists "
        "dependencies; its workers run on jobbench's own Python"
    ]


def test_an_unreadable_pyproject_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project\n")
    with pytest.raises(UsageError, match=rf"--sdk {tmp_path}: cannot read pyproject.toml"):
        declared_dependencies(tmp_path)


def test_other_kinds_and_an_explicit_python_get_no_env(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("aiohttp\n")
    for spec in (
        WorkerSpec("model", "drain"),
        WorkerSpec("runpod"),
        WorkerSpec("runpod", sdk_path=tmp_path, python="/usr/bin/python3"),
    ):
        assert with_sdk_env(spec, pytest.fail) == spec
