"""`jobbench sweep` on a pool of processes (spawned, so a unit test may not): the same document,
byte for byte, as the cells simulated one by one in this process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.cli import run_cli

GRID = (
    "sweep", "--workers", "1,2,3,4", "--slots", "4,8", "--take-ahead", "0,4", "--burst", "32",
    "--job-seconds", "0.02", "--take-latency", "0.02", "--wake-latency", "0.005", "--hold", "2",
)  # fmt: skip  # 16 cells: enough for a pool (core/sweep_run.INLINE_CELLS)


def test_a_pool_of_processes_gives_the_same_document_as_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    saved = tmp_path / "reports/sweep.sweep.json"
    assert run_cli(monkeypatch, *GRID, "--processes", "1", cwd=tmp_path) == 0
    one = saved.read_bytes()
    saved.unlink()
    assert run_cli(monkeypatch, *GRID, "--processes", "2", cwd=tmp_path) == 0
    assert saved.read_bytes() == one
