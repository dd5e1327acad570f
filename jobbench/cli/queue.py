"""`jobbench serve` and `jobbench workers`: the fake queue, or a worker fleet for one
elsewhere, until Ctrl-C."""

from __future__ import annotations

from typing import Annotated

import typer

from fake_queue.options import DESCRIPTION
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
    fail,
)
from jobbench.errors import UsageError


@app.command(
    help=DESCRIPTION,
    add_help_option=False,  # -h is the queue parser's
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def serve(ctx: typer.Context) -> None:
    """The fake queue in the foreground: every argument goes to `python -m fake_queue`'s parser."""
    from fake_queue.options import OptionsError, parse_options
    from jobbench.commands.serve import serve_command

    # `python -m fake_queue`'s parser reads the flags, help and errors alike: one definition.
    try:
        options = parse_options(ctx.args, prog=ctx.command_path)
    except OptionsError as exc:
        fail(UsageError(str(exc)))
    exit_with(lambda: serve_command(options))


@app.command()
def workers(
    server: Annotated[
        str, Opt(metavar="URL", help="the fake queue's URL, e.g. http://10.0.0.5:8000")
    ],
    workers: Workers = 4,
    slots: Slots = None,
    take_ahead: TakeAhead = 0,
    worker: Worker = "runpod",
    policy: Policy = None,
    sdk: Sdk = None,
    python: Python = None,
    api_key: Annotated[
        str | None, Opt(metavar="KEY", help="key the queue was started with")
    ] = None,
    name: Annotated[
        str | None, Opt(metavar="PREFIX", help="worker id prefix (default HOST-PID)")
    ] = None,
) -> None:
    """Run N workers polling a fake queue that runs elsewhere, until Ctrl-C."""
    from jobbench.commands.workers import WorkersRequest, workers_command
    from jobbench.core.scenario.build import resolve_slots
    from jobbench.core.scenario.worker import worker_spec

    def command() -> int:
        spec = worker_spec(worker, policy, take_ahead, sdk, python)
        slots_ = resolve_slots(slots, spec)
        return workers_command(WorkersRequest(server, workers, slots_, spec, api_key, name))

    exit_with(command)
