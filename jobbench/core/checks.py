"""The checks of flags and TOML fields that several commands share, each with a one-line error
naming the flag (or field) and the fix. Standard library only: the CLI imports it at start."""

from __future__ import annotations

import math

from jobbench.errors import UsageError


def check_positive_int(flag: str, value: int, otherwise: str = "") -> None:
    """`flag` names the flag or TOML field; `otherwise` the other spellings it accepts."""
    if value < 1:
        raise UsageError(
            f"{flag} {value}: must be a whole number >= 1" + (f", {otherwise}" if otherwise else "")
        )


def check_label(label: str) -> None:
    """The label names the result file: no folders, no hidden files."""
    if not label or any(c in label for c in "/\\") or label.startswith("."):
        raise UsageError(f"--label {label!r}: use a plain file name like main or pr-123")


def check_job_seconds(value: float) -> None:
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"--job-seconds {value}: use a number of seconds >= 0")
