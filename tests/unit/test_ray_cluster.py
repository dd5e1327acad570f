"""--cluster's address and its one-line errors (procs/ray_cluster.py), with no cluster: `auto`
without RAY_ADDRESS, an address that is not HOST:PORT, and one where nothing listens (a port
of this machine that no one holds), each a usage error naming --cluster and what to do."""

from __future__ import annotations

import signal
import socket
import sys
from pathlib import Path

import pytest

from jobbench.errors import EXIT_USAGE, UsageError
from jobbench.procs import ray_cluster
from jobbench.procs.signals import handlers_kept
from tests.unit.cli import run_cli


def test_auto_is_ray_address_and_says_so_when_it_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    assert ray_cluster.resolve_address("auto") == "10.0.0.5:6379"
    assert ray_cluster.resolve_address("ray://head:10001") == "ray://head:10001"
    monkeypatch.delenv("RAY_ADDRESS")
    with pytest.raises(UsageError) as caught:
        ray_cluster.resolve_address("auto")
    assert str(caught.value) == (
        "--cluster auto: RAY_ADDRESS is not set; set it or give --cluster ray://HOST:PORT"
    )
    assert caught.value.exit_code == EXIT_USAGE


@pytest.mark.parametrize("address", ["head", "ray://head", "head:port", ":6379"])
def test_an_address_without_host_and_port_is_refused(address: str) -> None:
    with pytest.raises(
        UsageError, match=r"^--cluster .*: give ray://HOST:PORT, HOST:PORT or auto$"
    ):
        ray_cluster.split_address(address, address)


def test_host_and_port_are_read_from_both_forms() -> None:
    assert ray_cluster.split_address("a", "ray://10.1.2.3:10001") == ("10.1.2.3", 10001)
    assert ray_cluster.split_address("a", "head-svc:6379") == ("head-svc", 6379)
    assert ray_cluster.split_address("a", "[::1]:6379") == ("::1", 6379)


def test_an_address_where_no_cluster_listens_is_one_line_naming_it() -> None:
    with socket.socket() as held:  # a free port, closed again: nothing listens there
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
    with pytest.raises(UsageError) as caught:
        ray_cluster.connect(f"127.0.0.1:{port}")
    said = str(caught.value)
    assert said.startswith(
        f"--cluster 127.0.0.1:{port}: no Ray cluster answers at 127.0.0.1:{port}"
    )
    assert said.endswith("start one (ray start --head) or fix the address")
    assert "\n" not in said


def test_disconnect_is_idempotent_and_free_where_ray_was_never_imported() -> None:
    ray_cluster.disconnect()
    ray_cluster.disconnect()


# ---- sweep --cluster: its flags, through the CLI ------------------------------------------------
SWEEP = ("sweep", "--workers", "1", "--burst", "8", "--job-seconds", "0.02")


def cluster_sweep(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *args: str,
) -> str:
    """`jobbench sweep ... ARGS`'s one-line error; it exits 2 and writes no document."""
    assert run_cli(monkeypatch, *SWEEP, *args, cwd=tmp_path) == EXIT_USAGE
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "reports").exists() or not any((tmp_path / "reports").iterdir())
    return err.strip()


def test_without_ray_one_line_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where it is missing
    err = cluster_sweep(monkeypatch, tmp_path, capsys, "--cluster", "127.0.0.1:6379")
    assert err == f"error: {ray_cluster.CLUSTER_MISSING}"
    assert ray_cluster.CLUSTER_MISSING == "--cluster needs Ray: pip install 'jobbench[ray]'"


@pytest.mark.parametrize("address", ["headnode", "ray://headnode", "headnode:port", "h:70000"])
def test_a_sweeps_address_that_is_not_one_names_the_flag_and_the_forms(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    address: str,
) -> None:
    err = cluster_sweep(monkeypatch, tmp_path, capsys, "--cluster", address)
    assert err == f"error: --cluster {address}: give ray://HOST:PORT, HOST:PORT or auto"


def test_processes_with_cluster_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = cluster_sweep(
        monkeypatch, tmp_path, capsys, "--processes", "2", "--cluster", "127.0.0.1:6379"
    )
    assert err == (
        "error: --processes 2 with --cluster: the cluster's CPUs run the cells; "
        "leave out --processes"
    )


def test_handlers_kept_puts_back_what_a_library_replaced() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with handlers_kept():
        signal.signal(signal.SIGTERM, lambda signum, frame: None)  # as ray.init does
    assert signal.getsignal(signal.SIGTERM) is before


def test_cells_go_in_batches_that_still_fill_every_cpu_of_the_cluster() -> None:
    from jobbench.core.sweep.sweep_run import CHUNK, cluster_batch

    assert cluster_batch(3, slots=16) == 1  # fewer cells than slots: one a task
    assert cluster_batch(24, slots=16) == 2  # 12 tasks, near the 16 slots
    assert cluster_batch(100_000, slots=16) == CHUNK  # a task is never more than a chunk


# ---- run --cluster: its flags, checked before anything connects ---------------------------------
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("--worker-cpus", "2"),
            "--worker-cpus: the CPUs of each worker's Ray actor; add --cluster",
        ),
        (("--cluster", "127.0.0.1:1", "--target", "sim"), "drop --target sim"),
        (("--cluster", "127.0.0.1:1", "--worker-cpus", "0"), "--worker-cpus 0: use a number"),
        (("--cluster", "127.0.0.1:1"), "--cluster 127.0.0.1:1: no Ray cluster answers at"),
    ],
)
def test_run_checks_the_cluster_flags_before_connecting(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    said: str,
) -> None:
    """No cluster needed: each mistake is one line naming the flag, exit 2, nothing written."""
    code = run_cli(monkeypatch, "run", "--worker", "model", "--burst", "8", *args, cwd=tmp_path)
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "reports").exists()


def test_run_without_ray_says_how_to_install_it_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where it is missing
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    code = run_cli(
        monkeypatch, "run", "--cluster", "auto", "--worker", "model", "--burst", "8", cwd=tmp_path
    )
    assert code == EXIT_USAGE
    assert capsys.readouterr().err.strip() == f"error: {ray_cluster.CLUSTER_MISSING}"


def test_a_cluster_has_room_for_as_many_rows_as_its_cpus_hold_the_largest_first() -> None:
    from jobbench.procs.ray_workers import ClusterPools  # imports Ray

    nodes = tuple(ray_cluster.ClusterNode(f"n{i}", "10.0.0.1", 2.0) for i in range(2))
    info = ray_cluster.ClusterInfo("10.0.0.1:6379", nodes, "10.0.0.2")
    pools = ClusterPools(info, 1.0, ("tmp",))
    assert pools.room([1, 2]) == 2  # 3 of the 4 CPUs
    assert pools.room([4, 4, 1, 1, 1]) == 1  # the two largest need 8
    assert pools.room([1, 1, 1, 1, 1, 1]) == 4
    assert pools.room([9]) == 1  # never none: a row too big for it fails to place, as before
    assert ClusterPools(info, 0.5, ("tmp",)).room([4, 4, 1]) == 2


@pytest.mark.parametrize(
    ("cpus", "lanes", "pairs", "at_once"),
    [
        (4.0, "auto", 3, 3),  # a one-worker row: each pair's row on a CPU of its own
        (4.0, "auto", 8, 4),  # no more than the CPUs hold
        (4.0, 2, 3, 2),  # --lanes caps the lanes of every pair together
        (4.0, "auto", 1, 1),  # one pair: nothing to run beside it
        (None, "auto", 3, 1),  # on this machine pairs take turns (their rows in lanes)
    ],
)
def test_a_trend_runs_as_many_pairs_at_once_as_the_cluster_holds_rows_of(
    tmp_path: Path, cpus: float | None, lanes: int | str, pairs: int, at_once: int
) -> None:
    from jobbench.core.real_workers.fake_target import FakeTarget
    from jobbench.core.scenario.build import build_scenario
    from jobbench.core.scenario.project import Suite
    from jobbench.core.sdk_history.setup import Setup
    from jobbench.core.sdk_history.trend_run import pairs_at_once
    from jobbench.procs.ray_workers import ClusterPools  # imports Ray

    row = build_scenario(workers=1, burst=8, job_seconds=0.1)
    setup = Setup(tmp_path, Suite("one", (row,)), row.worker, 1, tmp_path, lanes=lanes)
    target = FakeTarget()
    if cpus is not None:
        nodes = (ray_cluster.ClusterNode("n0", "10.0.0.1", cpus),)
        info = ray_cluster.ClusterInfo("10.0.0.1:6379", nodes, "10.0.0.2")
        target = FakeTarget(pools=ClusterPools(info, 1.0, ("tmp",)), placed_on="10.0.0.1:6379")
    assert pairs_at_once(target, setup, pairs) == at_once
