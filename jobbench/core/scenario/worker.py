"""`--worker`, `--policy`, `--take-ahead`, `--sdk` and `--python` (or a variant's keys of the same
names) read into a checked WorkerSpec, the one place their values are checked: a spec built here
is trusted after, by the scenario, the targets and the worker processes.

The two checks that stay elsewhere are about something else: whether the installed runpod SDK
can take ahead (workers/kinds.py check_take_ahead_support, a fact of the environment found by
probing it), and a worker process reading its own environment (workers/policy_worker_config.py),
which a user may start by hand; that one applies the same rule, policies.take_ahead_problem.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from jobbench.core.scenario.checks import TAKE_AHEAD, check_count
from jobbench.errors import UsageError
from jobbench.workers import policies
from jobbench.workers.spec import WorkerSpec

WORKER_KINDS = ("runpod", "model")


def worker_spec(
    worker: str, policy: str | None, take_ahead: int, sdk: Path | None, python: str | None
) -> WorkerSpec:
    """Read `--worker runpod|model|"CMD ..."` and its companions, each checked."""
    if worker in WORKER_KINDS:
        kind, command = worker, None
    elif " " in worker.strip() or "/" in worker or worker.endswith(".py"):
        kind, command = "command", worker
    else:
        raise UsageError(
            f"--worker {worker!r}: use runpod, model, or a command like 'python handler.py'"
        )
    if kind == "model" and policy is None:
        policy = policies.policy_for(take_ahead)
    spec = WorkerSpec(
        kind=kind,
        policy=policy,
        take_ahead=take_ahead,
        sdk_path=sdk,
        python=python,
        command=command,
    )
    _check_worker(spec)
    return spec


def _check_worker(w: WorkerSpec) -> None:
    check_count(TAKE_AHEAD, w.take_ahead)
    if w.kind == "model":
        _check_policy(w.policy, w.take_ahead)
    elif w.policy is not None:
        raise UsageError(
            f"--policy {w.policy}: only the model worker has policies; add --worker model"
        )
    if w.kind == "command":
        _check_command(w)
    if w.sdk_path is not None and not w.sdk_path.is_dir():
        raise UsageError(f"--sdk {w.sdk_path}: not a folder; give a runpod-python checkout")


def _check_policy(policy: str | None, take_ahead: int) -> None:
    if policy not in policies.POLICIES:
        raise UsageError(f"--policy {policy!r}: use one of {', '.join(policies.POLICIES)}")
    problem = policies.take_ahead_problem(policy, take_ahead)
    if problem == policies.NEEDS_TAKE_AHEAD:
        raise UsageError(f"--policy {policy} needs --take-ahead K (K > 0), e.g. 32")
    if problem == policies.NO_TAKE_AHEAD:
        raise UsageError(
            f"--take-ahead {take_ahead}: policy {policy} has no take-ahead;"
            f" use --policy {policies.TAKE_AHEAD}"
        )


def _check_command(w: WorkerSpec) -> None:
    if not (w.command or "").strip():
        raise UsageError("--worker: the command is empty; give e.g. --worker 'python handler.py'")
    check_command_files(w.command or "")
    if w.take_ahead:
        raise UsageError(
            "--take-ahead: a user command takes ahead only by its own code, which jobbench "
            "does not set; drop --take-ahead or use --worker runpod"
        )


def check_command_files(command: str) -> None:
    """The program of a user command, and the .py script it runs, exist where it was typed:
    found now, in one line, not as N workers that each die at start in their own folder."""
    try:
        words = shlex.split(command)
    except ValueError:
        return  # workers/kinds.py names the quoting error
    if not words:
        return
    program, here = words[0], Path.cwd()
    found = (here / program).exists() if os.sep in program else shutil.which(program)
    if not found:
        raise UsageError(
            f"--worker {command!r}: {program}: no such program here or on PATH; "
            "give its path or install it"
        )
    if "-m" in words or "-c" in words:
        return
    script = next((w for w in words[1:] if not w.startswith("-")), None)
    if script is not None and script.endswith(".py") and not (here / script).is_file():
        raise UsageError(
            f"--worker {command!r}: {script}: no such file in {here}; give its path from the "
            "folder you run jobbench in"
        )
