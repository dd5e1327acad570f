"""Which progress and console a command gets: rich bars on a TTY, sparse plain lines otherwise
(or when CI=true). rich stays in render/text/terminal.py, imported only when it is used."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

from jobbench.render.text.plain_progress import PlainProgress

if TYPE_CHECKING:
    from jobbench.render.text.terminal import Console, RichProgress


# The rich bars handed out, so that the last message (an error, Ctrl-C's) stops them first.
_BARS: list[RichProgress] = []


def use_rich() -> bool:
    return sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("1", "true")


def make_progress(quiet: bool) -> tuple[Console | None, PlainProgress | RichProgress]:
    """(the console results print on, None for plain stdout; the progress of the reps)."""
    if quiet or not use_rich():
        return None, PlainProgress(quiet=quiet)
    from jobbench.render.text.terminal import rich_progress

    console, bar = rich_progress()
    _BARS.append(bar)
    return console, bar


def end_progress(after_ctrl_c: bool, stream: TextIO | None = None) -> None:
    """Before the command's last message: every live bar stopped (cleared, the cursor shown),
    and after a Ctrl-C on a terminal, the line it echoed `^C` on cleared, so that the message
    starts a line of its own rather than following the bar or the `^C`."""
    while _BARS:
        _BARS.pop().stop()
    stream = stream or sys.stderr
    if after_ctrl_c and stream.isatty():
        stream.write("\r\x1b[K")  # back to column 0, erase to the end of the line
        stream.flush()
