"""`jobbench sweep` on a pool of processes (forked, or spawned while another thread runs): the
same document, byte for byte, as the cells simulated one by one in this process."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from jobbench.core.sweep import sweep_run as sweep_run
from jobbench.procs import signals
from tests.unit.cli import run_cli

GRID = (
    "sweep", "--workers", "1,2,3,4", "--slots", "4,8", "--take-ahead", "0,4", "--burst", "32",
    "--job-seconds", "0.02", "--take-latency", "0.02", "--wake-latency", "0.005", "--hold", "2",
)  # fmt: skip  # 16 cells: enough for a pool (core/sweep/sweep_run.INLINE_CELLS)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_pool_of_processes_gives_the_same_document_as_one(
    method: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    saved = tmp_path / "reports/sweep.sweep.json"
    assert run_cli(monkeypatch, *GRID, "--processes", "1", cwd=tmp_path) == 0
    one = saved.read_bytes()
    saved.unlink()
    chosen: list[str] = []

    def start_method() -> str:
        chosen.append(method)
        return method

    monkeypatch.setattr(sweep_run, "pool_start_method", start_method)
    assert run_cli(monkeypatch, *GRID, "--processes", "2", cwd=tmp_path) == 0
    assert saved.read_bytes() == one and chosen == [method]


def test_the_pool_spawns_while_another_thread_runs() -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert sweep_run.pool_start_method() == "spawn"
    finally:
        release.set()
        other.join()


def _stop_handlers() -> tuple[object, object]:
    return signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_pool_processes_leave_stopping_to_the_command(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the command's own SIGTERM handler (procs/signals.py) raises KeyboardInterrupt: a forked
    # pool process must not inherit it, or the pool's end prints a traceback from each
    monkeypatch.setattr(sweep_run, "pool_start_method", lambda: method)
    previous = signal.signal(signal.SIGTERM, signals._interrupt)
    try:
        with sweep_run.cell_pool(2) as pool:
            handlers = pool.apply(_stop_handlers)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert handlers == (signal.SIG_IGN, signal.SIG_DFL)
