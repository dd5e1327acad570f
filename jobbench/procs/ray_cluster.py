"""The connection to a Ray cluster (`--cluster ADDRESS`): Ray imported only here, in
procs/ray_workers.py and procs/ray_tasks.py (an import-linter contract holds it), as an optional
extra, so a command without --cluster never pays for it and a machine without it gets one line
saying what to install."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from jobbench.errors import UsageError
from jobbench.procs.signals import handlers_kept

CLUSTER_MISSING = "--cluster needs Ray: pip install 'jobbench[ray]'"
# Ray retries an address nobody answers for minutes, printing as it goes: a plain TCP connect
# first says within seconds that nothing listens there.
PROBE_TIMEOUT_S = 5.0
CLIENT_PREFIX = "ray://"


@dataclass(frozen=True)
class ClusterNode:
    node_id: str
    ip: str
    cpus: float

    def to_json(self) -> dict[str, Any]:
        return {"id": self.node_id, "ip": self.ip, "cpus": self.cpus}


@dataclass(frozen=True)
class ClusterInfo:
    """The cluster as found when jobbench connected: the address as given and its live nodes."""

    address: str
    nodes: tuple[ClusterNode, ...]
    driver_ip: str  # this process's address as Ray sees it: where the nodes reach the queue

    @property
    def cpus(self) -> float:
        return sum(node.cpus for node in self.nodes)

    def node(self, node_id: str) -> ClusterNode | None:
        return next((n for n in self.nodes if n.node_id == node_id), None)


def import_ray() -> ModuleType:
    """Ray, or the usage error (exit 2) saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(CLUSTER_MISSING) from None
    return ray


def resolve_address(address: str) -> str:
    """`auto` is RAY_ADDRESS (Ray's own variable); anything else is given to ray.init as is."""
    if address != "auto":
        if not address.strip():
            raise UsageError("--cluster '': give ray://HOST:PORT, HOST:PORT or auto")
        return address
    found = os.environ.get("RAY_ADDRESS", "").strip()
    if not found:
        raise UsageError(
            "--cluster auto: RAY_ADDRESS is not set; set it or give --cluster ray://HOST:PORT"
        )
    return found


def connect(address: str) -> ClusterInfo:
    """Connect this process to the cluster (once: a second call reuses the connection) and list
    its live nodes. An address that cannot be reached is one line naming it."""
    ray = import_ray()
    target = resolve_address(address)
    host, port = split_address(address, target)
    if not ray.is_initialized():
        _probe(address, host, port)
        try:
            # The workers' output goes to their logs, not to this terminal; ray.init's own
            # SIGTERM handler (sys.exit) would skip our clean-up, so ours stay.
            with handlers_kept():
                ray.init(address=target, logging_level=logging.WARNING, log_to_driver=False)
            _ray_messages_to_stderr(ray)
        except Exception as exc:  # ConnectionError, RuntimeError, ValueError: Ray's own words
            _quietly_shutdown(ray)
            words = str(exc).strip().splitlines()
            raise UsageError(
                f"--cluster {address}: cannot connect to the Ray cluster at {target} "
                f"({words[0] if words else type(exc).__name__}); fix the address"
            ) from None
    return ClusterInfo(address, live_nodes(ray), driver_ip(ray, target, host, port))


def _ray_messages_to_stderr(ray: ModuleType) -> None:
    """Ray prints the cluster's error messages to the driver's stdout as they come (a lost
    node's raylet log tail among them), which would break `--json`'s document: they go to
    stderr, with jobbench's progress. The one private name jobbench touches in Ray: without it
    (another Ray), the messages stay where Ray puts them."""
    worker: Any = getattr(getattr(ray, "_private", None), "worker", None)
    show = getattr(worker, "print_to_stdstream", None)
    if worker is None or show is None or getattr(show, "to_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        show({**data, "is_err": True}, ignore_prefix)

    to_stderr.to_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


def split_address(flag: str, target: str) -> tuple[str, int]:
    """HOST and PORT of `HOST:PORT` or `ray://HOST:PORT`; anything else is a usage error."""
    rest = target.removeprefix(CLIENT_PREFIX)
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--cluster {flag}: give ray://HOST:PORT, HOST:PORT or auto")
    return host.strip("[]"), int(port)


def _probe(flag: str, host: str, port: int) -> None:
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
    except OSError as exc:
        raise UsageError(
            f"--cluster {flag}: no Ray cluster answers at {host}:{port} "
            f"({exc.strerror or exc}); start one (ray start --head) or fix the address"
        ) from None


def driver_ip(ray: ModuleType, target: str, host: str, port: int) -> str:
    """The address the nodes reach this process at: Ray's own view of this node when connected
    directly; through Ray Client (which runs nothing here) the address this machine reaches the
    head from."""
    if not target.startswith(CLIENT_PREFIX):
        return str(ray.util.get_node_ip_address())
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((host, port))  # UDP: no packet sent, only the route chosen
        return str(s.getsockname()[0])


def live_nodes(ray: ModuleType | None = None) -> tuple[ClusterNode, ...]:
    ray = ray or import_ray()
    return tuple(
        ClusterNode(str(n["NodeID"]), str(n["NodeManagerAddress"]), n["Resources"].get("CPU", 0.0))
        for n in ray.nodes()
        if n.get("Alive")
    )


def disconnect() -> None:
    """Leave the cluster; idempotent, and nothing to do where Ray was never imported (importing
    it takes a second)."""
    ray = sys.modules.get("ray")
    if ray is not None:
        _quietly_shutdown(ray)


def _quietly_shutdown(ray: ModuleType) -> None:
    with contextlib.suppress(Exception):
        if ray.is_initialized():
            ray.shutdown()
