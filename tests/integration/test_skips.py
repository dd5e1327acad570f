"""A test that needs a program the machine lacks is skipped with a reason naming it, and where
`.ci/run` forbids skips (it installs every program) the run fails, naming each skipped test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEEDS_NODE = (
    "tests/integration/test_ci_example.py::test_every_workflow_and_action_passes_actionlint"
)


def pytest_without_programs(**env: str) -> subprocess.CompletedProcess[str]:
    """The node test in a child pytest whose PATH finds no program at all."""
    return subprocess.run(
        # One process: the suite's three xdist workers would cost ~3 s of CPU each for one test.
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "-rs",
            NEEDS_NODE,
        ],
        cwd=ROOT,
        env={**os.environ, "PATH": "/nonexistent", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("forbid", "code"), [("", 0), ("1", 1)])
def test_a_missing_program_skips_with_its_install_line_and_fails_where_skips_are_forbidden(
    forbid: str, code: int
) -> None:
    done = pytest_without_programs(JOBBENCH_TESTS_NO_SKIPS=forbid)
    assert done.returncode == code, done.stdout + done.stderr
    assert "needs node: install it with `apt-get install -y nodejs npm`" in done.stdout
    forbidden = "1 skipped, which JOBBENCH_TESTS_NO_SKIPS=1 does not allow:" in done.stdout
    assert forbidden == bool(forbid), done.stdout
