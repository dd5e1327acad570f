"""`jobbench serve` and `jobbench workers`: the fake queue, or a worker fleet for one
elsewhere, until Ctrl-C."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fake_queue.options import SERVE_HELP
from jobbench.cli.app import (
    Opt,
    Policy,
    Python,
    Sdk,
    Slots,
    TakeAhead,
    Worker,
    Workers,
    app,
    exit_with,
)


@app.command()
def serve(
    host: Annotated[str | None, Opt(help=SERVE_HELP["--host"])] = None,
    port: Annotated[int | None, Opt(help=SERVE_HELP["--port"])] = None,
    endpoint_id: Annotated[str | None, Opt(help=SERVE_HELP["--endpoint-id"])] = None,
    take_latency: Annotated[str | None, Opt(help=SERVE_HELP["--take-latency"])] = None,
    wake_latency: Annotated[str | None, Opt(help=SERVE_HELP["--wake-latency"])] = None,
    hold: Annotated[str | None, Opt(help=SERVE_HELP["--hold"])] = None,
    done_latency: Annotated[str | None, Opt(help=SERVE_HELP["--done-latency"])] = None,
    api_key: Annotated[str | None, Opt(help=SERVE_HELP["--api-key"])] = None,
    rate_limits: Annotated[str | None, Opt(help=SERVE_HELP["--rate-limits"])] = None,
    fault: Annotated[list[str] | None, Opt(help=SERVE_HELP["--fault"])] = None,
    seed: Annotated[int | None, Opt(help=SERVE_HELP["--seed"])] = None,
    header_timeout: Annotated[float | None, Opt(help=SERVE_HELP["--header-timeout"])] = None,
    idle_timeout: Annotated[float | None, Opt(help=SERVE_HELP["--idle-timeout"])] = None,
    max_connections: Annotated[int | None, Opt(help=SERVE_HELP["--max-connections"])] = None,
    config: Annotated[Path | None, Opt(help=SERVE_HELP["--config"])] = None,
    ready_json: Annotated[bool, Opt("--ready-json", help=SERVE_HELP["--ready-json"])] = False,
) -> None:
    """Serve the fake RunPod queue (worker, client and bench-control APIs) until Ctrl-C."""
    from fake_queue.options import ServeOptions
    from jobbench.commands.serve import serve_command

    # The same options `python -m fake_queue` parses; a flag left out (None) keeps --config's.
    options = ServeOptions(
        host=host,
        port=port,
        endpoint_id=endpoint_id,
        take_latency=take_latency,
        wake_latency=wake_latency,
        hold=hold,
        done_latency=done_latency,
        api_key=api_key,
        rate_limits=rate_limits,
        faults=tuple(fault or ()),
        seed=seed,
        header_timeout=header_timeout,
        idle_timeout=idle_timeout,
        max_connections=max_connections,
        config=config,
        ready_json=ready_json,
    )
    exit_with(lambda: serve_command(options))


@app.command()
def workers(
    server: Annotated[str, Opt(help="the fake queue's URL, e.g. http://10.0.0.5:8000")],
    workers: Workers = 4,
    slots: Slots = 32,
    take_ahead: TakeAhead = 0,
    worker: Worker = "runpod",
    policy: Policy = None,
    sdk: Sdk = None,
    python: Python = None,
    api_key: Annotated[str | None, Opt(help="key the queue was started with")] = None,
    name: Annotated[str | None, Opt(help="worker id prefix (default HOST-PID)")] = None,
) -> None:
    """Run N workers polling a fake queue that runs elsewhere, until Ctrl-C."""
    from jobbench.commands.workers import WorkersRequest, workers_command
    from jobbench.workers.spec import worker_spec

    def command() -> int:
        spec = worker_spec(worker, policy, take_ahead, sdk, python)
        return workers_command(WorkersRequest(server, workers, slots, spec, api_key, name))

    exit_with(command)
