"""The harness's own CPU over a rep (procs/harness_cpu.py): /proc read as the kernel writes it,
cores per part, and the saturation rule that flags a rep measuring the harness."""

from __future__ import annotations

import os
import threading
import time

import pytest

from jobbench.procs import harness_cpu
from jobbench.procs.harness_cpu import CpuSample, saturation


def test_a_stat_line_gives_its_group_and_cpu_seconds_even_with_spaces_in_the_command() -> None:
    ticks = harness_cpu.TICKS_S
    fields = ["S", "1", "4242", "4242"] + ["0"] * 7 + [str(3 * ticks), str(ticks)] + ["0"] * 30
    line = "4243 (python -m jobbench (w0)) " + " ".join(fields)
    assert harness_cpu._proc_cpu(line) == (4242, 4.0)


def test_this_process_is_read_from_proc_and_burning_cpu_shows() -> None:
    """The driver and the queue are this process here; a worker's group is read in
    tests/integration/test_harness_cpu_groups.py (a unit test starts no process)."""
    pid = os.getpid()
    before = harness_cpu.sample(pid, {})
    _burn(0.3)
    after = harness_cpu.sample(pid, {})
    block = harness_cpu.harness_cpu(before, after, 0.5, 2)
    assert block is not None
    # Both are this process: 0.3 s of CPU, however long a busy machine took to give it.
    for part in ("driver_cores", "queue_cores"):
        assert block[part] * block["wall_s"] > 0.28, block
    assert block["machine_busy_cores"] == 1.0


def _burn(seconds: float) -> None:
    deadline = time.process_time() + seconds
    while time.process_time() < deadline:
        pass


def test_a_process_cpu_is_read_finer_than_a_clock_tick() -> None:
    """A short rep's worker runs a tick or two: read in whole ticks, 15 ms reads as 10 or 20."""
    pid = os.getpid()
    for _ in range(3):
        before, clock = harness_cpu.process_cpu(pid), time.process_time()
        _burn(0.015)
        after, spent = harness_cpu.process_cpu(pid), time.process_time() - clock
        assert before is not None and after is not None
        assert abs((after - before) - spent) < 0.003, (after - before, spent)


def test_the_cpu_of_a_thread_that_has_ended_still_counts() -> None:
    pid = os.getpid()
    before = harness_cpu.process_cpu(pid)
    worker = threading.Thread(target=_burn, args=(0.2,))  # process time: every thread's
    worker.start()
    worker.join()
    after = harness_cpu.process_cpu(pid)
    assert before is not None and after is not None
    assert after - before >= 0.19 - 1 / harness_cpu.TICKS_S


def cores_block(queue: float, workers: dict[str, float], busy: float) -> dict[str, object]:
    start = CpuSample(0.0, 0.0, 0.0, dict.fromkeys(workers, 0.0))
    end = CpuSample(10.0, 0.1, 10 * queue, {w: 10 * v for w, v in workers.items()})
    block = harness_cpu.harness_cpu(start, end, busy, 2)
    assert block is not None
    return block


def test_cores_are_cpu_seconds_over_the_reps_wall_and_others_are_the_rest() -> None:
    block = cores_block(0.5, {"w0": 0.2, "w1": 0.3}, 0.6)
    assert block["queue_cores"] == 0.5 and block["driver_cores"] == 0.01
    assert block["worker_cores"] == {"w0": 0.2, "w1": 0.3}
    assert block["machine_busy_cores"] == 1.2
    assert block["others_cores"] == pytest.approx(1.2 - 0.5 - 0.01 - 0.5)
    assert saturation(block) == []


def test_a_queue_near_a_full_core_or_a_machine_busy_with_others_disturbs_the_measurement() -> None:
    (queue_bound,) = saturation(cores_block(0.92, {"w0": 0.1}, 0.55))
    assert queue_bound["kind"] == "saturated"
    assert "the queue used 0.92 of a core" in queue_bound["what"]
    assert "fewer workers per core" in queue_bound["fix"] and "--server" in queue_bound["fix"]
    # 1.8 cores busy, 0.6 of them the run's: 1.2 cores of other work filled the machine.
    (machine,) = saturation(cores_block(0.3, {"w0": 0.3}, 0.9))
    assert machine["kind"] == "saturated"
    assert "the machine was 90% busy on 2 CPUs, 1.19 cores of it outside the run" in machine["what"]


def test_a_worker_near_a_full_core_or_workers_filling_the_machine_is_the_workers_own() -> None:
    (worker_bound,) = saturation(cores_block(0.1, {"w3": 0.85}, 0.5))
    assert worker_bound["kind"] == "worker_cpu" and "worker w3 used 0.85" in worker_bound["what"]
    # Two workers spinning fill the machine: nothing outside the run is to blame.
    (spin,) = saturation(cores_block(0.05, {"w0": 0.85, "w1": 0.85}, 0.9))
    assert spin["kind"] == "worker_cpu"
    assert "the workers kept the machine 90% busy" in spin["what"]
    assert "worker w0 used 0.85 of a core" in spin["what"]


def test_nothing_measured_is_nothing_flagged() -> None:
    assert harness_cpu.harness_cpu(None, None, None, None) is None
    assert saturation(None) == []
