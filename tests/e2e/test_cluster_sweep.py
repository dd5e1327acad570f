"""`jobbench sweep --cluster` on a real two-node Ray cluster on 127.0.0.1 (tests/e2e/ray_cluster.py,
started once for the module): every file the sweep writes is byte for byte a local sweep's
with the same seed, and both nodes ran cells; SIGTERM cancels the cells still running, saves
nothing and exits 130; a node killed mid-sweep costs nothing but time (its cells run again on
the head, and the documents are still the local ones)."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from jobbench.errors import Interrupted
from tests.e2e.helpers import run_jobbench, start_jobbench
from tests.e2e.ray_cluster import RayTestCluster, two_node_cluster

pytest.importorskip("ray", reason="needs Ray: pip install 'jobbench[ray]'")

# 24 cells of short bursts, a sampled latency and two reps a cell: seeds matter.
SMALL = (
    "sweep", "--workers", "1,2,4", "--slots", "4,8", "--take-ahead", "0,4", "--burst", "64",
    "--job-seconds", "0.02", "--take-latency", "0.02", "--take-latency", "uniform:0.01,0.03",
    "--wake-latency", "0.005", "--hold", "2", "--reps", "2", "--seed", "11",
)  # fmt: skip
# Long enough (a few seconds on two nodes) that a signal or a lost node lands mid-sweep.
LONG = (
    "sweep", "--workers", "1..8", "--slots", "4,8", "--take-ahead", "0,4", "--burst", "4096",
    "--job-seconds", "0.02", "--take-latency", "0.02", "--wake-latency", "0.005",
    "--hold", "2", "--seed", "5",
)  # fmt: skip
CELL_TASK = "ray::_on_node"  # a Ray worker's process title while it runs a cell


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayTestCluster]:
    with two_node_cluster() as running:
        yield running


def sweep_files(folder: Path) -> dict[str, bytes]:
    """Every file a sweep wrote under `folder`, by its path there."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def local_and_cluster(
    cluster: RayTestCluster, tmp_path: Path, args: tuple[str, ...]
) -> tuple[dict[str, bytes], Path]:
    """The files of a local sweep of `args`, and the folder a cluster sweep of them writes to."""
    local, remote = tmp_path / "local", tmp_path / "cluster"
    local.mkdir()
    remote.mkdir()
    done = run_jobbench(*args, "--processes", "2", "--html", "page.html", cwd=local)
    assert done.returncode == 0, done.stderr
    return sweep_files(local), remote


def test_a_cluster_sweep_writes_the_local_sweeps_bytes_from_cells_on_both_nodes(
    cluster: RayTestCluster, tmp_path: Path
) -> None:
    expected, remote = local_and_cluster(cluster, tmp_path, SMALL)
    done = run_jobbench(
        *SMALL, "--cluster", cluster.address, "--html", "page.html", cwd=remote, env=cluster.env
    )
    assert done.returncode == 0, done.stderr
    assert set(expected) == {"page.html", "reports/sweep.sweep.json", "reports/sweep.sweep.csv"}
    assert sweep_files(remote) == expected
    assert f"cluster: {cluster.address}, 2 nodes, 4 CPUs" in done.stderr
    nodes = re.search(r"sweep: cells ran on (\d) nodes of \S+: (.*)", done.stderr)
    assert nodes is not None, done.stderr
    counts = re.findall(r"[0-9a-f]{8} 127\.0\.0\.1 \((\d+)\)", nodes[2])
    assert nodes[1] == "2" and len(counts) == 2 and sum(map(int, counts)) == 24


def test_sigterm_cancels_the_cells_saves_nothing_and_exits_130(
    cluster: RayTestCluster, tmp_path: Path
) -> None:
    proc = start_jobbench(*LONG, "--cluster", cluster.address, cwd=tmp_path, env=cluster.env)
    wait_for_line(proc, "sweep: 32 cells")
    assert wait_for_cells(running=True), "no cell ran on the cluster"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == Interrupted.exit_code, err
    assert "interrupted" in err and "Traceback" not in err
    assert not (tmp_path / "reports").exists() or not any((tmp_path / "reports").iterdir())
    assert wait_for_cells(running=False), "cells still running on the cluster after the exit"


def test_a_node_killed_mid_sweep_changes_no_byte(cluster: RayTestCluster, tmp_path: Path) -> None:
    """Last in the module: the cluster has one node after it."""
    expected, remote = local_and_cluster(cluster, tmp_path, LONG)
    proc = start_jobbench(
        *LONG, "--cluster", cluster.address, "--html", "page.html", cwd=remote, env=cluster.env
    )
    wait_for_line(proc, "sweep: 32 cells")
    assert wait_for_cells(running=True), "no cell ran on the cluster"
    cluster.kill_second_node()
    assert proc.poll() is None, "the sweep ended before its node was lost"
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert sweep_files(remote) == expected


def wait_for_line(proc: subprocess.Popen[str], start: str, timeout_s: float = 60) -> None:
    """Read the command's stderr until a line starting with `start` (its other lines: dropped)."""
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout_s
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(start):
            return
    proc.kill()
    raise AssertionError(f"no line {start!r} from the sweep; it said: {''.join(seen)}")


def wait_for_cells(*, running: bool, timeout_s: float = 20) -> bool:
    """Until some Ray worker on this machine runs a cell (`running`), or none does."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(cell_tasks()) == running:
            return True
        time.sleep(0.05)
    return False


def cell_tasks() -> Iterator[psutil.Process]:
    for proc in psutil.process_iter(["cmdline"]):
        if CELL_TASK in " ".join(proc.info["cmdline"] or ()):
            yield proc
