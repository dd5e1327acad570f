"""The server's command-line options, defined once for both entry points: `python -m fake_queue`
(argparse, fake_queue/__main__.py) and `jobbench serve` (Typer) each parse their flags, with the
help texts of `SERVE_HELP`, into one frozen `ServeOptions`; `settings_from_options`
(fake_queue.settings) alone turns that into ServerSettings. Imports nothing but the stdlib's
dataclasses: jobbench's CLI imports this module for the help texts on every start.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

LATENCY_HELP = "seconds, or kind:a,b (uniform, normal, lognormal), or samples:FILE"

# The defaults quoted are ServerSettings' (tests/e2e/test_serve.py checks that they agree).
SERVE_HELP: dict[str, str] = {
    "--host": "bind address (default 127.0.0.1)",
    "--port": "port; 0 picks a free one (default 8000)",
    "--endpoint-id": "endpoint id in /v2/ID/ (default local)",
    "--take-latency": f"take answer delay: {LATENCY_HELP} (default 0.5)",
    "--wake-latency": f"woken take's answer delay: {LATENCY_HELP} (default 0.05)",
    "--hold": "long-poll hold, seconds (default 20)",
    "--done-latency": f"job-done answer delay: {LATENCY_HELP} (default 0)",
    "--api-key": "require this key on every route",
    "--rate-limits": "off | runpod (RunPod's documented limits; default off)",
    "--fault": "ROUTE:KIND:RATE, repeatable (e.g. job-done:500:0.1)",
    "--seed": "seed for sampled latencies and faults",
    "--header-timeout": "seconds a request's headers may take to arrive (default 10)",
    "--idle-timeout": "seconds an idle keep-alive connection stays open (default 60)",
    "--max-connections": "open connections served; more are answered 503 (default 16384)",
    "--config": "TOML file with these settings; the flags given override its values",
    "--ready-json": "print one JSON line {url, endpoint_url} when ready (for jobbench run)",
}


@dataclass(frozen=True)
class ServeOptions:
    """The flags as given: None (or empty) is a flag left out, which keeps the --config value."""

    host: str | None = None
    port: int | None = None
    endpoint_id: str | None = None
    take_latency: str | None = None
    wake_latency: str | None = None
    hold: str | None = None
    done_latency: str | None = None
    api_key: str | None = None
    rate_limits: str | None = None
    faults: tuple[str, ...] = ()  # --fault, in the order given
    seed: int | None = None
    header_timeout: float | None = None
    idle_timeout: float | None = None
    max_connections: int | None = None
    config: Path | None = None
    ready_json: bool = False


def flag(field_name: str) -> str:
    """The flag that sets a ServeOptions field: take_latency -> --take-latency."""
    return "--fault" if field_name == "faults" else "--" + field_name.replace("_", "-")
