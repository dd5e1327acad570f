"""Which progress and console a command gets: rich bars on a TTY, sparse plain lines otherwise
(or when CI=true). rich stays in render/terminal.py, imported only when it is used."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from jobbench.render.plain_progress import PlainProgress

if TYPE_CHECKING:
    from jobbench.render.terminal import Console, RichProgress


def use_rich() -> bool:
    return sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("1", "true")


def make_progress(quiet: bool) -> tuple[Console | None, PlainProgress | RichProgress]:
    """(the console results print on, None for plain stdout; the progress of the reps)."""
    if quiet or not use_rich():
        return None, PlainProgress(quiet=quiet)
    from jobbench.render.terminal import rich_progress

    return rich_progress()


def stdout_console() -> Console:
    """A 100-column console on stdout, for results printed without rich progress."""
    from jobbench.render.terminal import stdout_console as console

    return console()
