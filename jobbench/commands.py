"""Command cores: flags (a plain dict from the CLI) -> frozen config -> run -> render -> exit code.

Kept apart from cli.py so the Typer layer stays thin and these stay testable without Typer.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from fake_queue.latency import LatencyModel, LatencySpecError
from jobbench.benchmark import Plan, run_plans
from jobbench.config import RunConfig, Scenario, read_inputs, validate_run, worker_spec
from jobbench.drive.bench_client import split_server
from jobbench.errors import EXIT_OK, UsageError
from jobbench.results import print_json


def latency_from_flags(flags: dict[str, Any]) -> LatencyModel:
    try:
        return LatencyModel.from_mapping(
            {
                "take": flags["take_latency"],
                "wake": flags["wake_latency"],
                "hold": flags["hold"],
                "done": flags["done_latency"],
            }
        )
    except LatencySpecError as exc:
        raise UsageError(f"--{exc}".replace("_", "-", 1)) from None


def scenario_name(workers: int, burst: int, job_seconds: float) -> str:
    return f"{workers}w-{burst}j-{job_seconds:g}s"


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
    if flags.get("endpoint"):  # a live endpoint: no queue, no workers (jobbench/live_command.py)
        from jobbench.live_command import live_run_command

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

        render_result(docs[0], console or _stdout_console(), saved_to=str(plan.path))
    from jobbench.report_command import report_after_run

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


def make_progress(quiet: bool) -> tuple[Any, Any]:
    """Rich bars on a TTY, sparse plain lines otherwise (or when CI=true)."""
    from jobbench.cli import use_rich
    from jobbench.render.plain_progress import PlainProgress

    if quiet or not use_rich():
        return None, PlainProgress(quiet=quiet)
    from rich.console import Console

    from jobbench.render.terminal import RichProgress

    console = Console(stderr=True)
    return Console(), RichProgress(console)


def _stdout_console() -> Any:
    from rich.console import Console

    return Console(file=sys.stdout, width=100)
