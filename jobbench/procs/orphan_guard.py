"""A process that outlives jobbench only to stop what jobbench started.

Every child jobbench starts in its own session (the embedded queue, each worker, Locust) is out
of reach of the terminal's Ctrl-C, which is why jobbench stops each group itself on every exit it
sees. A SIGKILLed jobbench (`kill -9`, the OOM killer, a CI runner's hard timeout after its
SIGTERM) sees none, and those groups would run on, holding ports and CPU. The kernel's
PR_SET_PDEATHSIG does not fit: it reaches only the direct child, not the SDK's heartbeat child in
the same group; it fires when the thread that forked ends, and jobbench starts workers from
threads; and it needs a preexec_fn, which is unsafe in a process with threads.

So the first group a jobbench process starts also starts one guard, in its own session, whose
stdin is a pipe only that process writes to. jobbench tells it each group it starts (`+PGID`)
and each it has stopped (`-PGID`). When the pipe reads end of file, jobbench has exited, however
it did, and the guard stops every group still listed as jobbench would: SIGTERM and SIGCONT,
a grace, then SIGKILL. After a clean exit nothing is listed and the guard just ends.

The guard is run as `python -m jobbench.procs.orphan_guard GRACE_S`; it imports nothing of
jobbench but procs/groups.py, so it starts in tens of milliseconds.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO

from jobbench.procs.groups import group_alive, signal_group

POLL_S = 0.05  # how often the guard looks whether a stopped group has gone


class OrphanGuard:
    """The client side: one guard for this process, started with the first group it watches."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        # A forked child (the sweep's pool) must not hold the pipe open after this process
        # ends, or the guard would wait for the child: it forgets the guard at the fork.
        os.register_at_fork(after_in_child=self._forget)
        atexit.register(self.close)

    @property
    def pid(self) -> int | None:
        """The guard's process id, once one was started."""
        return self._process.pid if self._process is not None else None

    def watch(self, pgid: int) -> None:
        """Stop group `pgid` if this process exits before it called `release(pgid)`."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._process = self._start()
            self._tell(f"+{pgid}")

    def release(self, pgid: int) -> None:
        """Group `pgid` has been stopped: the guard forgets it."""
        with self._lock:
            if self._process is not None:
                self._tell(f"-{pgid}")

    def close(self) -> None:
        """At this process's exit: the guard ends at once, having stopped any group still
        listed, so a clean exit leaves no process behind, the guard included."""
        with self._lock:
            if self._process is None or self._process.stdin is None:
                return
            with contextlib.suppress(OSError):
                self._process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(self.grace_s + 2.0)
            self._process = None

    def _start(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", __name__, f"{self.grace_s:g}"],
            stdin=subprocess.PIPE,
            bufsize=0,  # each line goes out whole at once: a fork copies no half-written buffer
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # the terminal's Ctrl-C is for jobbench, not for it
        )

    def _tell(self, line: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        # A guard that died cannot be told; what it guarded is still stopped by jobbench.
        with contextlib.suppress(BrokenPipeError, ValueError):
            self._process.stdin.write(f"{line}\n".encode())

    def _forget(self) -> None:
        self._lock = threading.Lock()  # a fork copies a lock as it was, perhaps held
        if self._process is not None and self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        self._process = None


def guard(commands: IO[bytes], grace_s: float) -> None:
    """Keep the list of groups `commands` names until it ends, then stop those left."""
    groups: set[int] = set()
    for line in commands:
        text = line.strip().decode(errors="replace")
        if text[1:].isdigit() and text[:1] == "+":
            groups.add(int(text[1:]))
        elif text[1:].isdigit() and text[:1] == "-":
            groups.discard(int(text[1:]))
    stop_groups(groups, grace_s)


def stop_groups(groups: set[int], grace_s: float) -> None:
    """SIGTERM and SIGCONT to each group, up to `grace_s` for all to go, then SIGKILL."""
    for pgid in groups:
        signal_group(pgid, signal.SIGTERM)
        signal_group(pgid, signal.SIGCONT)  # a stopped (paused, hung) member acts on it too
    deadline = time.monotonic() + grace_s
    while any(group_alive(pgid) for pgid in groups) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    for pgid in groups:
        signal_group(pgid, signal.SIGKILL)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the end of its pipe ends it
    guard(sys.stdin.buffer, float(sys.argv[1]))
