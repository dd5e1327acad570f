"""The suite runs on several pytest-xdist workers at once, and most tests do not mind: they
wait on sockets and processes far more than they compute. A test marked `quiet` does mind: it
judges figures, flags or timings that other work on the machine disturbs (jobbench itself sets
a rep aside as `saturated` when processes outside the run fill the machine). It runs with no
other test beside it.

A readers-writer lock over two files does this across the worker processes: every other test
holds the room lock shared, a quiet test holds it alone. A quiet test first takes the door, so
that no new test enters while it waits for the ones inside to finish (else a steady stream of
short tests would keep it waiting for good); a test that enters passes through the door at once.

A file's tests run on one worker in their order (`--dist loadfile`), and a row of quiet tests
keeps the room from the first to the last of them (tests/conftest.py): the machine is emptied
once for the row, not before each of its tests, while the other workers would sit at the door
anyway. (One xdist group of every quiet test would make one row of them all, but `--dist
loadgroup` groups nothing under pytest 9.2: xdist 3.8 renames a test's `_nodeid`, which pytest
no longer reads.)
Without xdist there is no one to share the machine with, and nothing is locked.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TextIO


class MachineShare:
    """The lock files of one test run, in a folder every xdist worker of that run shares (None:
    a run in one process)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._kept = ExitStack()  # the room, held alone across a row of quiet tests
        self._keeping = False

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Beside other tests, never beside a quiet one."""
        with ExitStack() as files:
            if self.folder is not None:
                door, room = (files.enter_context(self._file(n)) for n in ("door", "room"))
                fcntl.flock(door, fcntl.LOCK_EX)
                fcntl.flock(room, fcntl.LOCK_SH)
                fcntl.flock(door, fcntl.LOCK_UN)
            yield

    @contextmanager
    def alone(self) -> Iterator[None]:
        """With no other test running (inside a row of quiet tests, it already is)."""
        kept_before = self._keeping
        self.keep_alone()
        try:
            yield
        finally:
            if not kept_before:
                self.release()

    def keep_alone(self) -> None:
        """Take the machine alone until `release`: for a row of quiet tests. Closing a file
        releases its lock."""
        if self.folder is None or self._keeping:
            return
        door, room = (self._kept.enter_context(self._file(n)) for n in ("door", "room"))
        fcntl.flock(door, fcntl.LOCK_EX)
        fcntl.flock(room, fcntl.LOCK_EX)
        self._keeping = True

    def release(self) -> None:
        self._kept.close()
        self._keeping = False

    def _file(self, name: str) -> TextIO:
        assert self.folder is not None
        return (self.folder / f"{name}.lock").open("a")
