"""--cluster's address and its one-line errors (procs/ray_cluster.py), with no cluster: `auto`
without RAY_ADDRESS, an address that is not HOST:PORT, and one where nothing listens (a port
of this machine that no one holds), each a usage error naming --cluster and what to do."""

from __future__ import annotations

import socket

import pytest

from jobbench.errors import EXIT_USAGE, UsageError
from jobbench.procs import ray_cluster


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
    pytest.importorskip("ray")
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
