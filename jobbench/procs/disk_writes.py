"""The workers' own disk writes: each worker's process group's `write_bytes` from /proc/<pid>/io
(Linux), the bytes its live processes caused to be sent to storage. The kernel counts a page
when a process first dirties it in the page cache (a log line, a state file rewritten), not
when it reaches the disk, so a page rewritten and fsynced on every job counts on every job.

A figure that cannot be read is left out, never 0: no /proc (not Linux), a kernel without I/O
accounting (no /proc/self/io), or a group one of whose processes we may not read (a setuid
child). A process that exits between two looks is left out too, as for the CPU
(procs/harness_cpu.py): what it wrote since the last look is not read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PROC = Path("/proc")


def io_write_bytes(io_text: str) -> int:
    """The `write_bytes` line of a /proc/<pid>/io text (ValueError: none there)."""
    for line in io_text.splitlines():
        key, _, value = line.partition(":")
        if key == "write_bytes":
            return int(value)
    raise ValueError("no write_bytes in /proc/<pid>/io")


def group_write_bytes(pgids: Mapping[str, int]) -> dict[str, int]:
    """Each named process group's write_bytes, its live members summed (one pass over /proc);
    a group that cannot be read whole is left out."""
    if not pgids or not (PROC / "self" / "io").is_file():
        return {}
    wanted = {pgid: name for name, pgid in pgids.items()}
    out = dict.fromkeys(pgids, 0)
    unreadable: set[str] = set()
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = wanted.get(os.getpgid(int(entry.name)))
        except OSError:  # gone meanwhile
            continue
        if name is None:
            continue
        try:
            out[name] += io_write_bytes((entry / "io").read_text())
        except FileNotFoundError:  # gone meanwhile: left out, as an ended process
            continue
        except (OSError, ValueError):  # not ours to read: the group's sum would be short
            unreadable.add(name)
    return {name: written for name, written in out.items() if name not in unreadable}
