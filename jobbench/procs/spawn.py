"""Start and stop worker processes: each in its own session (process group), so the SDK's
heartbeat child dies with it, and in its own working directory; stderr kept in a file for the
error message. `stop_group` stops any process started that way (the embedded queue, Locust
too)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from jobbench.errors import WorkerError
from jobbench.procs.groups import group_alive, signal_group
from jobbench.procs.orphan_guard import OrphanGuard
from jobbench.procs.signals import interrupts_deferred

STOP_GRACE_S = 3.0
KILL_WAIT_S = 5.0
STDERR_TAIL_BYTES = 2000
# Stops this process's groups should it be killed before it could (procs/orphan_guard.py).
GUARD = OrphanGuard(grace_s=STOP_GRACE_S)


def popen_own_group(argv: list[str], **options: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(argv, **options)` leading its own session (process group), out of reach
    of the terminal's Ctrl-C: `stop_group` stops it, and the orphan guard does if this process
    is killed first."""
    process: subprocess.Popen[Any] = subprocess.Popen(argv, start_new_session=True, **options)
    try:
        GUARD.watch(process.pid)
    except BaseException:  # the guard did not start, or a Ctrl-C: the caller never sees it
        stop_group(process, grace_s=0)
        raise
    return process


@dataclass
class WorkerProcess:
    worker_id: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    cwd: Path | None = None  # None: this process's; a fleet gives each worker its own
    popen: subprocess.Popen[bytes] | None = None
    node: str | None = None  # it runs here (a cluster's worker names its node)
    _log: IO[bytes] | None = field(default=None, repr=False)

    def start(self) -> None:
        self._log = self.log_path.open("wb")
        try:
            self.popen = popen_own_group(
                self.argv,
                env=self.env,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
            )
        except OSError as exc:
            self._log.close()
            raise WorkerError(
                self.worker_id, None, str(exc), f"did not start: {' '.join(self.argv)!r}"
            ) from None

    @property
    def pgid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def returncode(self) -> int | None:
        return self.popen.poll() if self.popen else None

    def signal(self, sig: int) -> None:
        """To its whole group (the SDK's heartbeat child too); nothing before it started."""
        if self.popen is not None:
            signal_group(self.popen.pid, sig)

    def wait(self, timeout_s: float) -> int | None:
        """Its exit code once it exits within `timeout_s`, else None."""
        if self.popen is None:
            return None
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.popen.wait(timeout_s)
        return None

    def stderr_tail(self) -> str:
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return ""
        return data[-STDERR_TAIL_BYTES:].decode(errors="replace")

    def check_alive(self, what: str = "died") -> None:
        code = self.returncode()
        if code is not None:
            raise WorkerError(self.worker_id, code, self.stderr_tail(), what)

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM the whole group, then SIGKILL it; never leaves a process behind."""
        if self.popen is not None:
            stop_group(self.popen, grace_s)
        if self._log is not None:
            self._log.close()


def stop_group(popen: subprocess.Popen[Any], grace_s: float = STOP_GRACE_S) -> None:
    """Stop a process that leads its own group (start_new_session) and all of the group: SIGTERM,
    `grace_s` for the leader to exit, SIGKILL, then wait until no member is left. Nothing else
    stops such a group (the terminal's Ctrl-C does not reach it), so Ctrl-C waits for this."""
    with interrupts_deferred():
        _stop_group(popen, grace_s)


def _stop_group(popen: subprocess.Popen[Any], grace_s: float) -> None:
    pgid = popen.pid
    if popen.poll() is None or group_alive(pgid):
        _end_group(popen, grace_s)
    # All gone (and never signalled again: the system may hand its id out again).
    GUARD.release(pgid)


def _end_group(popen: subprocess.Popen[Any], grace_s: float) -> None:
    pgid = popen.pid
    signal_group(pgid, signal.SIGTERM)
    signal_group(pgid, signal.SIGCONT)  # a stopped (paused, hung) member acts on it too
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(grace_s)
    signal_group(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(KILL_WAIT_S)  # reap it: a zombie leader would keep the group id alive
    _wait_group_gone(pgid)


def _wait_group_gone(pgid: int, timeout_s: float = KILL_WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while group_alive(pgid) and time.monotonic() < deadline:
        signal_group(pgid, signal.SIGKILL)
        time.sleep(0.02)


def stop_all(workers: list[WorkerProcess], after_sigterm: Callable[[], None] | None = None) -> None:
    """Stop every worker at once: SIGTERM all, `after_sigterm()` (the queue answers their
    long-polls, which an SDK worker waits for before it exits), one shared grace, then SIGKILL
    the rest.

    A second Ctrl-C or SIGTERM while this runs must not leave processes behind, so both wait."""
    with interrupts_deferred():
        _stop_all(workers, after_sigterm)


def _stop_all(workers: list[WorkerProcess], after_sigterm: Callable[[], None] | None) -> None:
    started = [worker.popen for worker in workers if worker.popen is not None]
    for popen in started:
        signal_group(popen.pid, signal.SIGTERM)
        signal_group(popen.pid, signal.SIGCONT)  # a stopped (paused, hung) one acts on it too
    if started and after_sigterm is not None:
        after_sigterm()
    deadline = time.monotonic() + STOP_GRACE_S
    for popen in started:
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(max(0.0, deadline - time.monotonic()))
    # Every survivor is killed before any is waited for, so their groups go away together.
    for popen in started:
        if popen.poll() is None or group_alive(popen.pid):
            signal_group(popen.pid, signal.SIGKILL)
    for worker in workers:
        worker.stop(grace_s=0)
