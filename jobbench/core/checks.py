"""The checks of flags and TOML fields that several commands share, each with a one-line error
naming the flag (or field) and the fix. Standard library only: the CLI imports it at start."""

from __future__ import annotations

import contextlib
import math
import tempfile
from pathlib import Path

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


def check_writable_folder(folder: Path, flag: str) -> None:
    """Before anything runs: a result that could not be saved fails now, as a usage error,
    not as a traceback after the run. Leaves nothing behind: folders it made to try are removed."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{flag} {folder}: not a folder; give a folder for the results")
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UsageError(
            f"{flag} {folder}: cannot write there ({exc.strerror or exc}); choose a folder "
            "you can write to"
        ) from None
    finally:
        for made in missing:  # deepest first; the run makes them again when it saves
            with contextlib.suppress(OSError):
                made.rmdir()


def check_writable_file(path: Path, flag: str) -> None:
    """`--html FILE` and the like: its folder must take a file, and it must not be a folder."""
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; give a file name, e.g. report.html")
    check_writable_folder(path.parent, flag)
