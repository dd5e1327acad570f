"""Start and stop worker processes: each in its own session (process group), so the SDK's
heartbeat child dies with it; stderr kept in a file for the error message."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from jobbench.errors import WorkerError

STOP_GRACE_S = 3.0
STDERR_TAIL_BYTES = 2000


@dataclass
class WorkerProcess:
    worker_id: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    popen: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = field(default=None, repr=False)

    def start(self) -> None:
        self._log = self.log_path.open("wb")
        try:
            self.popen = subprocess.Popen(
                self.argv,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
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
        if self.popen is None:
            return
        pgid = self.popen.pid
        _signal_group(pgid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(grace_s)
        _signal_group(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)
        _wait_group_gone(pgid)
        if self._log is not None:
            self._log.close()


def _signal_group(pgid: int, sig: int) -> None:
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


def _wait_group_gone(pgid: int, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while group_alive(pgid) and time.monotonic() < deadline:
        _signal_group(pgid, signal.SIGKILL)
        time.sleep(0.02)


def stop_all(workers: list[WorkerProcess]) -> None:
    """Stop every worker at once: SIGTERM all, one shared grace, then SIGKILL the rest.

    A second Ctrl-C while this runs must not leave processes behind, so SIGINT waits."""
    with _sigint_deferred():
        _stop_all(workers)


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


def _stop_all(workers: list[WorkerProcess]) -> None:
    for worker in workers:
        if worker.popen is not None:
            _signal_group(worker.popen.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for worker in workers:
        if worker.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.popen.wait(max(0.0, deadline - time.monotonic()))
    for worker in workers:
        worker.stop(grace_s=0)
