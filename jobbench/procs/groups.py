"""Signals to a process group, and whether one is left: what stopping a group started in its own
session comes down to (procs/spawn.py in jobbench, procs/orphan_guard.py after it). Standard
library only: the orphan guard imports it at its start."""

from __future__ import annotations

import contextlib
import os


def signal_group(pgid: int, sig: int) -> None:
    """`sig` to every member of group `pgid`; nothing when the group has gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
