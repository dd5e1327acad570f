"""`--cluster ADDRESS` before any cluster is there: Ray missing is one line saying how to install
it, a bad or unreachable address one line naming --cluster, exit code 2, and nothing of the
sweep written; `--processes` beside it is a usage error. (The cluster itself:
tests/e2e/test_cluster_sweep.py.)"""

from __future__ import annotations

import signal
import socket
import sys
from pathlib import Path

import pytest

from jobbench.errors import EXIT_USAGE, UsageError
from jobbench.procs import ray_cluster
from jobbench.procs.ray_cluster import CLUSTER_MISSING, connect, disconnect, resolve_address
from jobbench.procs.signals import handlers_kept
from tests.unit.cli import run_cli

SWEEP = ("sweep", "--workers", "1", "--burst", "8", "--job-seconds", "0.02")


@pytest.fixture
def ray_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The address is read and tried before Ray is imported: these tests need no Ray (the
    `dev` extra does not bring it), only the check that it is there passing."""
    monkeypatch.setattr(ray_cluster, "check_installed", lambda: None)


def free_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


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
    assert err == f"error: {CLUSTER_MISSING}"
    assert CLUSTER_MISSING == "--cluster needs Ray: pip install 'jobbench[ray]'"


@pytest.mark.usefixtures("ray_installed")
@pytest.mark.parametrize("address", ["headnode", "ray://headnode", "headnode:port", "h:70000"])
def test_an_address_that_is_not_one_names_the_flag_and_the_forms(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    address: str,
) -> None:
    err = cluster_sweep(monkeypatch, tmp_path, capsys, "--cluster", address)
    assert err == f"error: --cluster {address}: use ray://HOST:PORT, HOST:PORT or auto"


@pytest.mark.usefixtures("ray_installed")
@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_unreachable_head_is_one_line_naming_the_address(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    scheme: str,
) -> None:
    address = f"{scheme}127.0.0.1:{free_port()}"
    err = cluster_sweep(monkeypatch, tmp_path, capsys, "--cluster", address)
    assert err.startswith(f"error: --cluster {address}: no Ray head answers there (")
    assert err.endswith("start one with `ray start --head` or give its address")


@pytest.mark.usefixtures("ray_installed")
def test_auto_reads_ray_address_and_names_it_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(UsageError, match=r"^--cluster auto: RAY_ADDRESS is not set; set it or"):
        resolve_address("auto")
    address = f"127.0.0.1:{free_port()}"
    monkeypatch.setenv("RAY_ADDRESS", address)
    assert resolve_address("auto") == address
    with pytest.raises(UsageError, match=rf"^--cluster auto \({address}\): no Ray head answers"):
        connect("auto")
    disconnect()  # never connected: nothing to do, and no error
    disconnect()


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
    from jobbench.core.sweep.run import CHUNK, cluster_batch

    assert cluster_batch(3, slots=16) == 1  # fewer cells than slots: one a task
    assert cluster_batch(24, slots=16) == 2  # 12 tasks, near the 16 slots
    assert cluster_batch(100_000, slots=16) == CHUNK  # a task is never more than a chunk
