"""The example GitHub Actions workflow, read as the runner reads it, so that tests can run its
step scripts for real (bash for `run:`, node for `actions/github-script`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "github-actions" / "perf-gate.yml"


def steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load(EXAMPLE.read_text())
    steps: list[dict[str, Any]] = workflow["jobs"]["perf"]["steps"]
    return steps


def step(name: str) -> dict[str, Any]:
    """The step with this id, or whose name starts with `name`."""
    found = [s for s in steps() if s.get("id") == name or s.get("name", "").startswith(name)]
    assert len(found) == 1, f"one step {name!r} expected in {EXAMPLE}, found {len(found)}"
    return found[0]


def run_step(
    name: str, cwd: Path, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """The step's `run:` script as the runner starts it (`bash -e`, no `shell:` given), with
    `env` standing in for its `${{ }}` values and the runner's variables."""
    script = step(name)["run"]
    assert "${{" not in script, "values reach the script through env:, never inline"
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-e", "-c", script],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
