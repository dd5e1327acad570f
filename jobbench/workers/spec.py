"""What runs in each worker process, from `--worker`, `--policy` and `--take-ahead`, checked."""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from jobbench.errors import UsageError
from jobbench.workers.policies import (
    NEEDS_TAKE_AHEAD,
    NO_TAKE_AHEAD,
    POLICIES,
    policy_for,
    take_ahead_problem,
)

WORKER_KINDS = ("runpod", "model")


@dataclass(frozen=True)
class WorkerSpec:
    """What runs in each worker process.

    kind: `runpod` (the SDK), `model` (policy-model worker) or `command` (user's `command`).
    """

    kind: str = "runpod"
    policy: str | None = None
    take_ahead: int = 0
    sdk_path: Path | None = None
    python: str | None = None
    command: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    sdk_name: str | None = None  # how titles name `sdk_path`: a git ref's `v1.10.0 (79f6c12c1565)`

    def describe(self) -> str:
        if self.kind == "model":
            extra = f", take-ahead {self.take_ahead}" if self.take_ahead else ""
            return f"model worker ({self.policy}{extra})"
        if self.kind == "command":
            return f"command {self.command!r}"
        sdk = f" from {self.sdk_name or self.sdk_path}" if self.sdk_path else ""
        extra = f", take-ahead {self.take_ahead}" if self.take_ahead else ""
        return f"runpod SDK worker{sdk}{extra}"


def validate_worker(w: WorkerSpec) -> WorkerSpec:
    if w.take_ahead < 0:
        raise UsageError(f"--take-ahead {w.take_ahead}: use 0 (off) or a positive job count")
    if w.kind == "model":
        if w.policy not in POLICIES:
            raise UsageError(f"--policy {w.policy!r}: use one of {', '.join(POLICIES)}")
        problem = take_ahead_problem(w.policy, w.take_ahead)
        if problem == NEEDS_TAKE_AHEAD:
            raise UsageError("--policy take-ahead needs --take-ahead K (K > 0), e.g. 32")
        if problem == NO_TAKE_AHEAD:
            raise UsageError(
                f"--take-ahead {w.take_ahead}: policy {w.policy} has no take-ahead;"
                " use --policy take-ahead"
            )
    elif w.policy is not None:
        raise UsageError(
            f"--policy {w.policy}: only the model worker has policies; add --worker model"
        )
    if w.kind == "command" and not (w.command or "").strip():
        raise UsageError("--worker: the command is empty; give e.g. --worker 'python handler.py'")
    if w.kind == "command":
        check_command_files(w.command or "")
    if w.kind == "command" and w.take_ahead:
        raise UsageError(
            "--take-ahead: a user command takes ahead only by its own code, which jobbench "
            "does not set; drop --take-ahead or use --worker runpod"
        )
    if w.sdk_path is not None and not w.sdk_path.is_dir():
        raise UsageError(f"--sdk {w.sdk_path}: not a folder; give a runpod-python checkout")
    return w


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


def worker_spec(
    worker: str, policy: str | None, take_ahead: int, sdk: Path | None, python: str | None
) -> WorkerSpec:
    """Read `--worker runpod|model|"CMD ..."` and its companions."""
    if worker in WORKER_KINDS:
        kind, command = worker, None
    elif " " in worker.strip() or "/" in worker or worker.endswith(".py"):
        kind, command = "command", worker
    else:
        raise UsageError(
            f"--worker {worker!r}: use runpod, model, or a command like 'python handler.py'"
        )
    if kind == "model" and policy is None:
        policy = policy_for(take_ahead)
    return validate_worker(
        WorkerSpec(
            kind=kind,
            policy=policy,
            take_ahead=take_ahead,
            sdk_path=sdk,
            python=python,
            command=command,
        )
    )
