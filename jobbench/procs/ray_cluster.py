"""A Ray cluster that jobbench's `--cluster ADDRESS` connects this process to: Ray imported only
here and in procs/ray_tasks.py, and only when the flag is given (it is an optional extra), the
address read into a one-line usage error when it is not one, and the nodes that are there."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import socket
import sys
from dataclasses import dataclass
from types import ModuleType

from jobbench.errors import UsageError
from jobbench.procs.signals import handlers_kept

CLUSTER_MISSING = "--cluster needs Ray: pip install 'jobbench[ray]'"
CLIENT_SCHEME = "ray://"
AUTO = "auto"  # the address in RAY_ADDRESS, as Ray's own tools read it
ADDRESS_ENV = "RAY_ADDRESS"
REACH_TIMEOUT_S = 5.0  # a head that does not answer a TCP connect in this long is not there


@dataclass(frozen=True)
class ClusterNode:
    id: str  # Ray's node id (hex)
    ip: str
    cpus: float  # its logical CPUs


@dataclass(frozen=True)
class ClusterInfo:
    address: str  # as connected to: `auto` read from RAY_ADDRESS
    nodes: tuple[ClusterNode, ...]  # the live ones when this process connected

    @property
    def cpus(self) -> float:
        return sum(node.cpus for node in self.nodes)


def import_ray() -> ModuleType:
    """Ray, or the one line saying how to install it."""
    check_installed()
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise UsageError(CLUSTER_MISSING) from None


def check_installed() -> None:
    """The one line saying how to install Ray where it is not, without importing it (a second)."""
    if importlib.util.find_spec("ray") is None:
        raise UsageError(CLUSTER_MISSING)


def connect(address: str) -> ClusterInfo:
    """Connect this process to the cluster at `address` (`ray://HOST:PORT` through Ray Client,
    `HOST:PORT` to the head's GCS, `auto` for RAY_ADDRESS). Ray's SIGINT and SIGTERM handlers
    are put back to jobbench's (ray.init sets SIGTERM to exit at once, with no clean-up)."""
    check_installed()
    target = resolve_address(address)
    check_reachable(target, address)
    ray = import_ray()
    with handlers_kept():
        try:
            ray.init(
                address=target,
                logging_level=logging.WARNING,  # no "Connecting to..." lines on stderr
                log_to_driver=False,  # the tasks' own output stays in the cluster's logs
            )
        except (ConnectionError, RuntimeError, TimeoutError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(f"--cluster {address}: cannot connect ({first})") from None
    nodes = tuple(
        ClusterNode(
            id=node["NodeID"],
            ip=node["NodeManagerAddress"],
            cpus=float(node.get("Resources", {}).get("CPU", 0)),
        )
        for node in ray.nodes()
        if node.get("Alive")
    )
    return ClusterInfo(address=address, nodes=nodes)


def disconnect() -> None:
    """Leave the cluster (its tasks of ours are gone with the connection); again, or without
    Ray installed, nothing."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


def resolve_address(address: str) -> str:
    """The address ray.init is given: `auto` is RAY_ADDRESS's, and either must be `ray://HOST:PORT`
    or `HOST:PORT`."""
    if address == AUTO:
        address = os.environ.get(ADDRESS_ENV, "").strip()
        if not address:
            raise UsageError(
                f"--cluster {AUTO}: {ADDRESS_ENV} is not set; set it or give ray://HOST:PORT"
            )
    host_port(address)
    return address


def host_port(address: str) -> tuple[str, int]:
    """The head's host and port in `ray://HOST:PORT` or `HOST:PORT`."""
    rest = address.removeprefix(CLIENT_SCHEME)
    host, colon, port = rest.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--cluster {address}: use ray://HOST:PORT, HOST:PORT or auto")
    return host.strip("[]"), int(port)


def check_reachable(target: str, given: str) -> None:
    """A head nobody answers for is a one-line error now, not ray.init's retries for a minute."""
    host, port = host_port(target)
    try:
        with socket.create_connection((host, port), timeout=REACH_TIMEOUT_S):
            pass
    except OSError as exc:
        shown = given if given == target else f"{given} ({target})"
        raise UsageError(
            f"--cluster {shown}: no Ray head answers there ({exc.strerror or exc}); "
            "start one with `ray start --head` or give its address"
        ) from None
