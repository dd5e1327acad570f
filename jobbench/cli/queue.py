"""`jobbench serve` and `jobbench workers`: the fake queue, or a worker fleet for one
elsewhere, until Ctrl-C."""

from __future__ import annotations

import typer

from fake_queue.options import DESCRIPTION
from jobbench.cli.app import app, exit_with, fail
from jobbench.cli.flags import takes
from jobbench.commands.requests.workers import WorkersFlags
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
@takes(WorkersFlags)
def workers(flags: WorkersFlags) -> int:
    """Run N workers polling a fake queue that runs elsewhere, until Ctrl-C."""
    from jobbench.commands.workers import workers_command

    return workers_command(flags.request())
