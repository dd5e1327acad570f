"""A fake RunPod queue server with a measured latency model (design.md section 4)."""

from fake_queue.latency import Distribution, LatencyModel, parse_distribution
from fake_queue.server import RunningServer, ServerThread, start_server, worker_env
from fake_queue.settings import ServerSettings

__all__ = [
    "Distribution",
    "LatencyModel",
    "RunningServer",
    "ServerSettings",
    "ServerThread",
    "parse_distribution",
    "start_server",
    "worker_env",
]
