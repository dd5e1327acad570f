"""Command cores: flags (a plain dict from the CLI) -> frozen config -> run -> render -> exit code.

Kept apart from cli.py so the Typer layer stays thin and these stay testable without Typer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jobbench.clients.bench_client import split_server
from jobbench.core.config import (
    RunConfig,
    Scenario,
    latency_from_flags,
    read_inputs,
    scenario_name,
    validate_run,
)
from jobbench.core.loop import Plan, run_plans
from jobbench.errors import EXIT_OK, UsageError
from jobbench.render.progress import make_progress, stdout_console
from jobbench.results.store import print_json
from jobbench.workers.spec import worker_spec


def run_config(flags: dict[str, Any]) -> RunConfig:
    if flags["server"]:
        split_server(flags["server"])  # a malformed URL is a usage error, before anything runs
    spec = worker_spec(
        flags["worker"], flags["policy"], flags["take_ahead"], flags["sdk"], flags["python"]
    )
    scenario = Scenario(
        name=scenario_name(flags["workers"], flags["burst"], flags["job_seconds"]),
        workers=flags["workers"],
        slots=flags["slots"],
        burst=flags["burst"],
        job_seconds=flags["job_seconds"],
        worker=spec,
        latency=latency_from_flags(flags),
        inputs=read_inputs(flags["input_json"], flags["inputs"]),
    )
    return validate_run(
        RunConfig(
            scenarios=(scenario,),
            reps=flags["reps"],
            label=flags["label"],
            out=Path(flags["out"]),
            server_url=flags["server"],
            seed=flags["seed"],
            quiet=flags["quiet"],
            save_events=flags["events"],
            pin_queue=flags["pin_queue"],
        )
    )


def run_command(flags: dict[str, Any]) -> int:
    if flags.get("endpoint"):  # a live endpoint: no queue, no workers (jobbench/commands/live.py)
        from jobbench.commands.live import live_run_command

        return live_run_command(flags)
    if flags.get("submit_rate") is not None:
        raise UsageError("--submit-rate: only live mode paces submissions; add --endpoint URL|ID")
    config = run_config(flags)
    plan = Plan(config, api_key=flags["api_key"])
    console, progress = make_progress(config.quiet)
    docs = run_plans([plan], progress, header=run_header(config))
    if flags["json_out"]:
        print_json(docs[0])
    else:
        from jobbench.render.terminal import render_result

        render_result(docs[0], console or stdout_console(), saved_to=str(plan.path))
    from jobbench.commands.report import report_after_run

    report_after_run(docs[0], plan.path, flags.get("html"), config.quiet)
    return EXIT_OK


def run_header(config: RunConfig) -> str:
    """One line: target and model, workers, burst, reps (docs/metrics.md, "The run table")."""
    s = config.scenarios[0]
    target = f"fake queue at {config.server_url}" if config.server_url else "embedded fake queue"
    return (
        f"{target}, take {s.latency.take.describe()} s, wake {s.latency.wake.describe()} s; "
        f"{s.workers} x {s.worker.describe()} x {s.slots} slots; {s.burst} x "
        f"{s.job_seconds:g} s jobs; {config.reps} reps"
    )
