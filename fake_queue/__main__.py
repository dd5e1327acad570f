"""`python -m fake_queue`: the fake RunPod queue on its own (argparse: workers never load typer)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fake_queue.protocol import worker_env
from fake_queue.server import RunningServer, serve_forever
from fake_queue.settings import (
    ServerSettings,
    SettingsError,
    load_settings_file,
    settings_from_mapping,
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m fake_queue",
        description="A fake RunPod queue with a measured latency model.",
    )
    p.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port; 0 picks a free one (default 8000)")
    p.add_argument("--endpoint-id", default=None, help="endpoint id in /v2/ID/ (default local)")
    p.add_argument("--take-latency", default=None, help="seconds or kind:a,b (default 0.5)")
    p.add_argument("--wake-latency", default=None, help="seconds or kind:a,b (default 0.05)")
    p.add_argument("--hold", default=None, help="long-poll hold in seconds (default 20)")
    p.add_argument("--done-latency", default=None, help="job-done answer delay (default 0)")
    p.add_argument("--api-key", default=None, help="require this key on every route")
    p.add_argument("--rate-limits", default=None, choices=("off", "runpod"))
    p.add_argument("--fault", action="append", default=[], help="ROUTE:KIND:RATE, repeatable")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--config", type=Path, default=None, help="TOML file with the same settings")
    p.add_argument(
        "--ready-json",
        action="store_true",
        help="print one JSON line {url, endpoint_url} when ready (for jobbench run)",
    )
    return p.parse_args(argv)


def settings_from_args(args: argparse.Namespace) -> ServerSettings:
    base = ServerSettings()
    if args.config is not None:
        base = settings_from_mapping(load_settings_file(args.config), base)
    flags: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "endpoint_id": args.endpoint_id,
        "api_key": args.api_key,
        "rate_limits": args.rate_limits,
        "seed": args.seed,
        "faults": args.fault,
    }
    for key in ("take_latency", "wake_latency", "hold", "done_latency"):
        if getattr(args, key) is not None:
            flags[key] = getattr(args, key)
    return settings_from_mapping({k: v for k, v in flags.items() if v is not None}, base)


def ready_banner(server: RunningServer) -> str:
    settings = server.settings
    lines = [
        f"fake_queue listening on {server.base_url} (endpoint {server.endpoint_url})",
        f"latency: {settings.latency.describe()}",
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


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        settings = settings_from_args(args)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    def on_ready(server: RunningServer) -> None:
        if args.ready_json:
            print(
                json.dumps({"url": server.base_url, "endpoint_url": server.endpoint_url}),
                flush=True,
            )
        else:
            print(ready_banner(server), flush=True)

    try:
        serve_forever(settings, on_ready)
    except OSError as exc:
        print(
            f"error: cannot listen on {settings.host}:{settings.port}: {exc.strerror}; "
            "choose another --port (0 picks a free one)",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
