"""`jobbench locust`: flags -> LocustRequest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jobbench.cli.app import (
    Hold,
    InputJson,
    Inputs,
    JobSeconds,
    Latency,
    Opt,
    Policy,
    Python,
    Sdk,
    Seed,
    Worker,
    app,
    exit_with,
)
from jobbench.cli.values import decimal, whole


@app.command()
def locust(
    locust_args: Annotated[
        list[str] | None,
        typer.Argument(metavar="LOCUST_ARGS", help="passed to Locust as is (after --)"),
    ] = None,
    endpoint: Annotated[
        str | None, Opt(metavar="URL|ID", help="live endpoint URL or id (default: fake)")
    ] = None,
    api_key: Annotated[
        str | None, Opt(metavar="KEY", help="key of --endpoint (else RUNPOD_API_KEY)")
    ] = None,
    headless: Annotated[bool, Opt("--headless", help="no web UI: start at once")] = False,
    # -u, -r, -t: Locust's own short flags for these
    users: Annotated[
        int, Opt("--users", "-u", metavar="N", parser=whole(10), help="concurrent Locust users")
    ] = 10,
    spawn_rate: Annotated[
        float,
        Opt(
            "--spawn-rate",
            "-r",
            metavar="RATE",
            parser=decimal(10.0),
            help="users started per second",
        ),
    ] = 10.0,
    run_time: Annotated[
        str | None, Opt("--run-time", "-t", metavar="DURATION", help="stop after e.g. 30s, 5m")
    ] = None,
    json_file: Annotated[
        Path | None, Opt(metavar="FILE", help="Locust's final stats as JSON")
    ] = None,
    csv: Annotated[str | None, Opt(metavar="PREFIX", help="Locust's CSV files prefix")] = None,
    html: Annotated[Path | None, Opt(metavar="FILE", help="Locust's HTML report")] = None,
    web_host: Annotated[str, Opt(metavar="ADDR", help="web UI address")] = "127.0.0.1",
    web_port: Annotated[int, Opt(metavar="PORT", parser=whole(8089), help="web UI port")] = 8089,
    master: Annotated[bool, Opt("--master", help="Locust master node")] = False,
    locust_worker: Annotated[
        bool, Opt("--locust-worker", help="Locust worker node (Locust's --worker)")
    ] = False,
    processes: Annotated[
        int | None,
        Opt(metavar="N", parser=whole(4), help="Locust processes on this machine"),
    ] = None,
    max_fail_ratio: Annotated[
        float,
        Opt(metavar="RATIO", parser=decimal(0.01), help="JOB failure ratio that exits 4"),
    ] = 0.01,
    job_seconds: JobSeconds = 0.5,
    payload_bytes: Annotated[
        int, Opt(metavar="BYTES", parser=whole(1024), help="result bytes per bench job")
    ] = 0,
    input_json: InputJson = None,
    inputs: Inputs = None,
    workers: Annotated[
        int,
        Opt("--workers", "-w", metavar="N", parser=whole(4), help="fake queue: worker processes"),
    ] = 4,
    slots: Annotated[
        int | None,
        Opt(
            "--slots",
            "-s",
            metavar="N",
            parser=whole(32),
            help="fake queue: concurrent jobs per worker (32; a command must say)",
        ),
    ] = None,
    take_ahead: Annotated[  # no -t: that is --run-time, as in Locust
        int, Opt(metavar="K", parser=whole(32), help="fake queue: take-ahead (0: off)")
    ] = 0,
    worker: Worker = "runpod",
    policy: Policy = None,
    sdk: Sdk = None,
    python: Python = None,
    take_latency: Latency = "0.5",
    wake_latency: Latency = "0.05",
    hold: Hold = "20",
    done_latency: Latency = "0",
    seed: Seed = None,
) -> None:
    """Locust's web UI (or --headless) driving jobs through the fake queue or --endpoint."""
    from jobbench.clients.endpoint import live_endpoint
    from jobbench.commands.locust import LocustRequest, fleet_scenario, locust_command
    from jobbench.core.scenario.config import LatencyFlags, read_inputs
    from jobbench.core.scenario.worker import worker_spec

    def command() -> int:
        latency = LatencyFlags(take_latency, wake_latency, hold, done_latency)
        spec = worker_spec(worker, policy, take_ahead, sdk, python)
        read_inputs(input_json, inputs)  # a usage error here, not a Locust crash later
        request = LocustRequest(
            target=live_endpoint(endpoint, api_key) if endpoint else None,
            scenario=fleet_scenario(workers, slots, job_seconds, spec, latency.model()),
            headless=headless,
            users=users,
            spawn_rate=spawn_rate,
            run_time=run_time,
            json_file=json_file,
            csv=csv,
            html=html,
            web_host=web_host,
            web_port=web_port,
            master=master,
            locust_worker=locust_worker,
            processes=processes,
            max_fail_ratio=max_fail_ratio,
            payload_bytes=payload_bytes,
            inputs_file=inputs,
            input_json=input_json,
            seed=seed,
            extra=tuple(locust_args or ()),
        )
        return locust_command(request)

    exit_with(command)
