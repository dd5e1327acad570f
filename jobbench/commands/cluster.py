"""`--cluster ADDRESS` for the commands that run the fake target (run, compare, gate): the
connection to the Ray cluster and the FakeTarget whose workers it places. A helper of
the command modules, not a command: Ray itself is imported by procs/ alone, and only once
--cluster is given."""

from __future__ import annotations

import secrets

from jobbench.commands.requests.shared import ClusterRequest
from jobbench.core.real_workers.fake_target import FakeTarget
from jobbench.errors import UsageError
from jobbench.procs.ray_cluster import connect, disconnect
from jobbench.workers.kinds import WORKER_HOME, WORKER_TMP

DEFAULT_WORKER_CPUS = 1.0


def check_cluster(request: ClusterRequest, target: str, endpoint: str | None = None) -> None:
    """The cluster flags against the others, before anything connects."""
    if request.address is None:
        if request.worker_cpus is not None:
            raise UsageError("--worker-cpus: the CPUs of each worker's Ray actor; add --cluster")
        return
    if target != "fake" or endpoint is not None:
        raise UsageError(
            f"--cluster {request.address}: places the fake target's worker processes on the "
            "cluster; drop --target sim / --endpoint, or --cluster"
        )


def fake_target(
    request: ClusterRequest,
    server: str | None = None,
    api_key: str | None = None,
    seed: int | None = None,
    pin_queue: bool = True,
) -> FakeTarget:
    """The fake target, its workers here or on the cluster. On the cluster the embedded queue
    listens on the address the nodes reach this machine at, never on every interface, and asks
    for a key: the one given, else one made for this run (never written anywhere: the workers
    get it in their environment)."""
    if request.address is None:
        return FakeTarget(server, api_key, seed=seed, pin_queue=pin_queue)
    cluster = connect(request.address)  # first: without Ray, the line saying how to get it
    from jobbench.procs.ray_workers import ClusterPools  # Ray: only once --cluster is given

    cpus = request.worker_cpus or DEFAULT_WORKER_CPUS
    key = api_key if api_key or server else secrets.token_urlsafe(24)
    return FakeTarget(
        server,
        key,
        seed=seed,
        pin_queue=pin_queue,
        pools=ClusterPools(cluster, cpus, (WORKER_TMP, WORKER_HOME)),
        queue_host=cluster.driver_ip,
        placed_on=request.address,
    )


def leave_cluster() -> None:
    """At the command's end, every way out: the driver's connection closed (Ray then ends any
    actor of ours still alive, and their guards the workers)."""
    disconnect()
