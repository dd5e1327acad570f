"""Unit tests run in this process only: starting any other process fails the test.

Tests that need real processes (workers, servers, the jobbench CLI as a program) belong in
tests/integration or tests/e2e.
"""

from __future__ import annotations

import multiprocessing.util
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import pytest


class ProcessStarted(AssertionError):
    """A unit test tried to start a process."""


def refuse(what: str) -> Any:
    def started(*args: Any, **kwargs: Any) -> NoReturn:
        raise ProcessStarted(
            f"a unit test started a process ({what}); move it to tests/integration or tests/e2e"
        )

    return started


# Every way the standard library starts a process: subprocess (and asyncio's subprocesses,
# which use it), fork, posix_spawn, os.system / os.exec* and multiprocessing's spawn.
BLOCKED: tuple[tuple[Any, str], ...] = (
    (subprocess.Popen, "_execute_child"),
    (os, "fork"),
    (os, "forkpty"),
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    (os, "system"),
    (os, "execv"),
    (os, "execve"),
    (multiprocessing.util, "spawnv_passfds"),
)


@contextmanager
def processes_refused() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for owner, name in BLOCKED:
            if hasattr(owner, name):
                what = f"{getattr(owner, '__name__', owner)}.{name}"
                patch.setattr(owner, name, refuse(what))
        yield


# Hooks, not an autouse fixture: they also cover module- and session-scoped fixtures, which
# are set up before any function-scoped fixture could patch. A conftest's runtest hooks run
# for the tests under its folder only, so tests/integration and tests/e2e are not affected.
@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with processes_refused():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with processes_refused():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    with processes_refused():
        return (yield)
