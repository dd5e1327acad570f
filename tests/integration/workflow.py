"""Workflow and action files read as the runner reads them, so that tests can run their steps'
scripts for real: a `run:` step with bash as the runner starts it, its `env:` given by the test
in place of the `${{ }}` values the runner would fill in."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples" / "github-actions"
EXAMPLE = EXAMPLES / "perf-gate.yml"
FORK_GATE = EXAMPLES / "perf-gate-fork.yml"
FORK_COMMENT = EXAMPLES / "perf-gate-comment.yml"
HISTORY = EXAMPLES / "perf-history.yml"
RELEASE = ROOT / ".github" / "workflows" / "release.yml"
ACTION = ROOT / "action.yml"
COMMENT_ACTION = ROOT / "comment" / "action.yml"
SETUP_ACTION = ROOT / "setup" / "action.yml"
ACTIONS = [ACTION, COMMENT_ACTION, SETUP_ACTION]
WORKFLOWS = [
    *sorted(EXAMPLES.glob("*.yml")),
    *sorted((ROOT / ".github" / "workflows").glob("*.yml")),
]


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(path.read_text())
    # YAML 1.1 reads a workflow's `on:` key as the boolean True.
    if True in document:
        document["on"] = document.pop(True)
    return document


def steps(path: Path = EXAMPLE, job: str | None = None) -> list[dict[str, Any]]:
    """A workflow job's steps (its only job when `job` is None), or an action's."""
    document = load(path)
    if "runs" in document:
        found: list[dict[str, Any]] = document["runs"]["steps"]
        return found
    jobs = document["jobs"]
    chosen = jobs[job] if job is not None else next(iter(jobs.values()))
    found = chosen["steps"]
    return found


def step(name: str, path: Path = EXAMPLE, job: str | None = None) -> dict[str, Any]:
    """The step with this id, or whose name starts with `name`."""
    found = [
        s
        for s in steps(path, job)
        if s.get("id") == name or str(s.get("name", "")).startswith(name)
    ]
    assert len(found) == 1, f"one step {name!r} expected in {path}, found {len(found)}"
    return found[0]


def run_script(
    found: dict[str, Any], cwd: Path, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """A `run:` step's script as the runner starts it: `bash -e` when it names no shell,
    `bash --noprofile --norc -eo pipefail` for `shell: bash` (an action's steps name it)."""
    script = found["run"]
    assert "${{" not in script, "values reach the script through env:, never inline"
    shell = ["bash", "--noprofile", "--norc", "-e"]
    if found.get("shell") == "bash":
        shell += ["-o", "pipefail"]
    return subprocess.run(
        [*shell, "-c", script],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_step(
    name: str, cwd: Path, env: dict[str, str], path: Path = EXAMPLE, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return run_script(step(name, path), cwd, env, timeout)


def git(cwd: Path, *args: str) -> str:
    """A git command in `cwd`, its output stripped (a failure raises with git's message)."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()
