"""Serve the queue from `ServeOptions` (fake_queue.options) until SIGINT or SIGTERM: the one
command behind `python -m fake_queue` and `jobbench serve`. It prints the ready banner (or the
--ready-json line that jobbench run reads), and every error as one line with exit code 2.
"""

from __future__ import annotations

import json
import socket
import sys

from fake_queue.http.server import RunningServer, fit_open_file_limit, serve_forever
from fake_queue.options import ServeOptions
from fake_queue.protocol import worker_env
from fake_queue.settings import ServerSettings, SettingsError, settings_from_options

EXIT_USAGE = 2  # jobbench.errors.EXIT_USAGE: bad settings, or a port it cannot listen on


def serve(options: ServeOptions) -> int:
    """Serve until a signal; 0 then, 2 (with a one-line error on stderr) if it cannot start."""
    try:
        settings = settings_from_options(options)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    settings = _fit_open_files(settings)

    def on_ready(server: RunningServer) -> None:
        if options.ready_json:
            ready = {"url": server.base_url, "endpoint_url": server.endpoint_url}
            print(json.dumps(ready), flush=True)
        else:
            print(ready_banner(server), flush=True)

    try:
        serve_forever(settings, on_ready)
    except socket.gaierror as exc:  # before OSError, which it is: the host, not the port
        print(
            f"error: --host {settings.host}: cannot resolve it ({exc.strerror}); give an "
            "address like 127.0.0.1, or 0.0.0.0 for every interface",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except OSError as exc:
        print(
            f"error: cannot listen on {settings.host}:{settings.port}: {exc.strerror}; "
            "choose another --port (0 picks a free one)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return 0


def _fit_open_files(settings: ServerSettings) -> ServerSettings:
    fitted = fit_open_file_limit(settings)
    if fitted.max_connections < settings.max_connections:
        print(
            f"warning: --max-connections {settings.max_connections} lowered to "
            f"{fitted.max_connections}, as many as the open-file limit (ulimit -n) allows",
            file=sys.stderr,
        )
    return fitted


def ready_banner(server: RunningServer) -> str:
    """Where the queue listens, its latency model, the faults it injects, how it sheds abuse,
    and the env a worker needs to poll it."""
    settings = server.settings
    lines = [
        f"fake_queue listening on {server.base_url} (endpoint {server.endpoint_url})",
        f"latency: {settings.latency.describe()}",
        f"faults: {', '.join(rule.describe() for rule in settings.faults) or 'none'}",
        f"connections: up to {settings.max_connections} open, headers within "
        f"{settings.header_timeout:g} s, closed after {settings.idle_timeout:g} s idle",
        "worker env (set RUNPOD_POD_ID per worker):",
    ]
    env = worker_env(server.endpoint_url)
    if settings.api_key:
        env["RUNPOD_AI_API_KEY"] = "<your --api-key>"
    lines += [f"  {key}={value}" for key, value in env.items()]
    if not settings.is_loopback:
        lines.insert(
            0,
            f"WARNING: bound to {settings.host}, not loopback: anyone who can reach "
            "this machine can use this queue" + ("" if settings.api_key else " (no --api-key set)"),
        )
    return "\n".join(lines)
