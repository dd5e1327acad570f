"""The guard in tests/unit/conftest.py: a unit test that starts a process fails."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from tests.unit.conftest import ProcessStarted

HARMLESS = [sys.executable, "-c", "pass"]  # what would run if the guard let it through


def test_subprocess_is_refused_in_unit_tests() -> None:
    with pytest.raises(ProcessStarted, match="move it to tests/integration or tests/e2e"):
        subprocess.run(HARMLESS, check=True)
    with pytest.raises(ProcessStarted):
        subprocess.Popen(HARMLESS)


def test_asyncio_subprocesses_are_refused_too() -> None:
    async def start() -> None:
        process = await asyncio.create_subprocess_exec(*HARMLESS)
        await process.wait()

    with pytest.raises(ProcessStarted):
        asyncio.run(start())
