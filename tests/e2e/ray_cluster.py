"""A real two-node Ray cluster on 127.0.0.1 for the tests: a head and a second raylet, each with
its own logical CPUs, in a process of its own (`python -m tests.e2e.ray_cluster`) so Ray's
settings are this cluster's alone and nothing of it outlives the tests.

`two_node_cluster()` starts it and yields a `RayTestCluster`; leaving the block, or the test
process dying (its end of the control pipe closes), stops every process of it. The control
process also takes one command on stdin: `kill-node`, which kills the second node's raylet and
everything on it, as a host lost mid-run.

Ports come from 6500-6599 (the head's GCS on 6500); Ray's files go to a temporary folder of
its own (RAY_TMPDIR), not /tmp/ray, which another cluster on this machine may use."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psutil

HEAD_PORT = 6500
CPUS_PER_NODE = 2
READY_TIMEOUT_S = 60
# On Linux Ray turns 127.0.0.1 into the host's address when it connects (and a cluster whose
# nodes bound 127.0.0.1 is not there); off, loopback stays loopback, as on macOS.
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


@dataclass
class RayTestCluster:
    address: str  # HOST:PORT of the head's GCS, as `--cluster` takes it
    env: dict[str, str]  # what a jobbench process connecting to it needs in its environment
    control: subprocess.Popen[str]

    def kill_second_node(self) -> None:
        """The second node's raylet and its workers killed at once, as a host that died."""
        assert self.control.stdin is not None and self.control.stdout is not None
        self.control.stdin.write("kill-node\n")
        self.control.stdin.flush()
        assert self.control.stdout.readline().strip() == "killed"


@contextlib.contextmanager
def two_node_cluster() -> Iterator[RayTestCluster]:
    """A head and a second node, CPUS_PER_NODE logical CPUs each, on 127.0.0.1; stopped after."""
    with tempfile.TemporaryDirectory(prefix="rayt-", dir="/tmp") as temp:  # short: socket paths
        env = {**os.environ, **LOOPBACK_ENV, "RAY_TMPDIR": temp}
        control = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.ray_cluster"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=Path(__file__).parents[2],
        )
        try:
            address = _ready_line(control)
            yield RayTestCluster(address=address, env=env, control=control)
        finally:
            _stop(control)
            _kill_leftovers(temp)


def _kill_leftovers(temp: str) -> None:
    """Ray's processes of this cluster still alive once it stopped (a worker of the killed node
    notices its raylet is gone only after a while): each has the cluster's own RAY_TMPDIR in
    its environment (a worker's command line is its title, `ray::IDLE`, and says nothing)."""
    ours = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.environ().get("RAY_TMPDIR") == temp:
                proc.kill()
                ours.append(proc)
    psutil.wait_procs(ours, timeout=10)


def _ready_line(control: subprocess.Popen[str]) -> str:
    assert control.stdout is not None
    line = control.stdout.readline().strip()
    if not line.startswith("ready "):
        _, err = control.communicate(timeout=READY_TIMEOUT_S)
        raise AssertionError(f"the test cluster did not start: {line!r}; stderr: {err[-2000:]}")
    return line.removeprefix("ready ")


def _stop(control: subprocess.Popen[str]) -> None:
    """Close its stdin: it stops the cluster and exits; killed if it does not in time."""
    try:
        control.communicate(timeout=READY_TIMEOUT_S)  # closes stdin, reads what is left
    except subprocess.TimeoutExpired:
        control.kill()
        control.communicate()


def _serve() -> None:
    """The control process: start the cluster, say `ready ADDRESS`, take commands until stdin
    closes, then stop every node."""
    from ray.cluster_utils import Cluster

    head: dict[str, Any] = {
        "node_ip_address": "127.0.0.1",
        "gcs_server_port": HEAD_PORT,
        "num_cpus": CPUS_PER_NODE,
        "include_dashboard": False,
        "dashboard_agent_listen_port": HEAD_PORT + 1,
        "ray_client_server_port": HEAD_PORT + 2,
        "min_worker_port": HEAD_PORT + 10,
        "max_worker_port": HEAD_PORT + 49,
        # A dead node is noticed in about a second (the default: 5 misses of 3 s each).
        "_system_config": {"health_check_period_ms": 300, "health_check_failure_threshold": 3},
    }
    cluster = Cluster(initialize_head=True, head_node_args=head)
    try:
        second = cluster.add_node(
            node_ip_address="127.0.0.1",
            num_cpus=CPUS_PER_NODE,
            dashboard_agent_listen_port=HEAD_PORT + 3,
            min_worker_port=HEAD_PORT + 50,
            max_worker_port=HEAD_PORT + 89,
        )
        _say(f"ready {cluster.address}")
        for line in sys.stdin:
            if line.strip() == "kill-node":
                cluster.remove_node(second, allow_graceful=False)
                _say("killed")
    finally:
        cluster.shutdown()


def _say(text: str, stream: IO[str] = sys.stdout) -> None:
    print(text, file=stream, flush=True)


if __name__ == "__main__":
    _serve()
