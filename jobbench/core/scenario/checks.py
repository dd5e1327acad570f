"""The checks of flags and TOML fields that several commands share, each with a one-line error
naming the flag (or field) and the fix. Standard library only: the CLI imports it at start."""

from __future__ import annotations

import contextlib
import math
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from jobbench.errors import UsageError

# ---- Bounds on input (docs/reliability.md, "Bounds on input", is this table explained) ------
# Sizes beyond what one machine (or the fake queue) can run, checked before anything starts.
# The latency model's bound is fake_queue.queue.latency.MAX_LATENCY_S: the queue enforces it too.


@dataclass(frozen=True)
class Bound:
    """What a flag (or the TOML field of the same name) may be; `why` is quoted in the error."""

    flag: str
    least: float
    most: float
    why: str


MAX_TAKE_JOBS = "a take asks for up to slots + take-ahead jobs and the queue answers 10,000 at most"
WORKERS = Bound("--workers", 1, 1024, "each worker is an OS process, two with the SDK's heartbeat")
SLOTS = Bound("--slots", 1, 4096, MAX_TAKE_JOBS)
TAKE_AHEAD = Bound("--take-ahead", 0, 4096, MAX_TAKE_JOBS)
BURST = Bound("--burst", 1, 1_000_000, "the fake queue's limit for one burst")  # = app.MAX_BURST
REPS = Bound("--reps", 1, 1000, "a median needs 5 to 30; a thousand is a typo")
JOB_SECONDS = Bound("--job-seconds", 0, 3600, "a job of more than an hour is a typo")
PAYLOAD_BYTES = Bound("--payload-bytes", 0, 16 << 20, "a result goes in one body of 32 MB at most")
BOUNDS = (WORKERS, SLOTS, TAKE_AHEAD, BURST, REPS, JOB_SECONDS, PAYLOAD_BYTES)

# What a run holds in memory, from `ps -o rss` / smaps Pss on CPython 3.11 (docs/reliability.md):
# a runpod SDK worker with its heartbeat child ~65 MB, a model worker ~38 MB; a user command
# is assumed to be an SDK worker. The queue keeps every job of a rep and its events, and
# jobbench reads them back: ~3 KB a job. Plus jobbench and the queue themselves.
WORKER_BYTES = {"runpod": 80 << 20, "model": 40 << 20, "command": 80 << 20}
BYTES_PER_JOB = 3 << 10
BASE_BYTES = 256 << 20


def check_positive_int(flag: str, value: int, otherwise: str = "") -> None:
    """`flag` names the flag or TOML field; `otherwise` the other spellings it accepts."""
    check_count(Bound(flag, 1, math.inf, "no bound"), value, otherwise)


def whole_or_auto(flag: str, text: str, example: int) -> int | str:
    """`auto` or a whole number >= 1, as `--reps` and `--lanes` are written."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise UsageError(
            f"{flag} {text!r}: write a whole number, e.g. {example}, or auto"
        ) from None
    check_positive_int(flag, value, "or auto")
    return value


def check_count(bound: Bound, value: int, otherwise: str = "") -> None:
    """A whole number within `bound` (the flag named, and the fix)."""
    if value < bound.least:
        extra = f", {otherwise}" if otherwise else ""
        raise UsageError(f"{bound.flag} {value}: must be a whole number >= {bound.least:g}{extra}")
    if value > bound.most:
        raise UsageError(
            f"{bound.flag} {value}: at most {bound.most:,.0f} ({bound.why}); "
            f"use {bound.flag} {bound.most:.0f} or less"
        )


def check_seconds(bound: Bound, value: float) -> None:
    if not math.isfinite(value) or value < bound.least:
        raise UsageError(f"{bound.flag} {value}: use a number of seconds >= {bound.least:g}")
    if value > bound.most:
        raise UsageError(
            f"{bound.flag} {value:g}: at most {bound.most:g} s ({bound.why}); "
            f"use {bound.flag} {bound.most:g} or less"
        )


def check_fleet_sizes(workers: int, slots: int) -> None:
    """The fixed caps on a fleet (its take-ahead's is the worker's: core/scenario/worker.py);
    check_memory says whether this machine holds it."""
    check_count(WORKERS, workers)
    check_count(SLOTS, slots)


def check_memory(workers: int, kind: str, burst: int) -> None:
    """workers x their RSS + the burst's jobs must fit in MemAvailable (skipped where the
    kernel does not say, e.g. macOS)."""
    available = mem_available()
    if available is None:
        return
    per_worker = WORKER_BYTES.get(kind, WORKER_BYTES["runpod"])
    jobs = burst * BYTES_PER_JOB
    if BASE_BYTES + jobs > available:
        fit = max(0, (available - BASE_BYTES) // BYTES_PER_JOB)
        raise UsageError(
            f"--burst {burst}: the queue holds every job of a rep (~3 KB each), {_gb(jobs)} "
            f"with {_gb(available)} of memory available; use --burst {fit} or less"
        )
    needed = BASE_BYTES + jobs + workers * per_worker
    if needed > available:
        fit = (available - BASE_BYTES - jobs) // per_worker
        raise UsageError(
            f"--workers {workers}: {workers} {kind} workers (~{per_worker >> 20} MB each)"
            + (f" and a {burst}-job burst" if burst else "")
            + f" need ~{_gb(needed)}, {_gb(available)} of memory is available; "
            + (f"use --workers {fit} or less" if fit >= 1 else "use a smaller --burst")
        )


def mem_available() -> int | None:
    """MemAvailable from /proc/meminfo, in bytes; None where there is none."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _gb(size: int) -> str:
    return f"{size / (1 << 30):.1f} GB"


def check_label(label: str) -> None:
    """The label names the result file: no folders, no hidden files."""
    if not label or any(c in label for c in "/\\") or label.startswith("."):
        raise UsageError(f"--label {label!r}: use a plain file name like main or pr-123")


def check_job_seconds(value: float) -> None:
    check_seconds(JOB_SECONDS, value)


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


_FLAG = re.compile(r"--([a-z][a-z-]*)")
_KEY_OF_FLAG = {"fault": "faults", "worker-fault": "worker_faults"}  # where they differ


@contextlib.contextmanager
def toml_terms(where: str) -> Iterator[None]:
    """A check's error in the TOML file's terms: prefixed with where, every flag as its key
    (`--take-ahead 3: ...; use --policy take-ahead` -> `take_ahead = 3: ...; use policy =
    take-ahead`), since the fix is in the file, not on a command line."""
    try:
        yield
    except UsageError as exc:
        message = _FLAG.sub(lambda flag: _toml_key(flag[1]) + " =", str(exc))
        raise UsageError(f"{where}: {message}") from None


def _toml_key(flag: str) -> str:
    return _KEY_OF_FLAG.get(flag, flag.replace("-", "_"))
