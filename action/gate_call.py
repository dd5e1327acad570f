"""The `jobbench gate` call of the action: its argv from the inputs, run with its exit code kept
(the decision on the check is the report step's, after the cache is saved)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GateCall:
    sdk: Path
    base: str  # full shas
    head: str
    base_name: str  # how the comment names each side
    head_name: str
    suite: str
    budget: str
    max_regression: str
    lanes: str
    out: Path
    markdown: Path

    def argv(self) -> list[str]:
        # 12 characters name the commits and the files they save (reports/<base>.json).
        return [
            "jobbench",
            "gate",
            self.base[:12],
            self.head[:12],
            "--repo",
            str(self.sdk),
            "--suite",
            self.suite,
            "--reps",
            "auto",
            "--budget",
            self.budget,
            "--max-regression",
            self.max_regression,
            "--lanes",
            self.lanes,
            "--out",
            str(self.out),
            "--markdown",
            str(self.markdown),
            "--baseline-name",
            self.base_name,
            "--candidate-name",
            self.head_name,
        ]


def run(call: GateCall) -> int:
    """The gate's exit code. Its Markdown goes to the comment, and the report step writes the
    job summary from it, so the gate itself does not append it there too."""
    call.markdown.unlink(missing_ok=True)  # a verdict of an earlier call is never this one's
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    try:
        return subprocess.run(call.argv(), env=env, check=False).returncode
    except OSError as err:
        print(f"error: cannot run jobbench ({err}); the install step puts it on PATH", flush=True)
        return 127
