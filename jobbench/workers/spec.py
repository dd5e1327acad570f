"""What runs in each worker process: the kind, its policy and take-ahead, where its SDK is. A spec
is read from the flags, and checked, once: jobbench/core/scenario/worker.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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
