"""What `jobbench run` shows on stdout once its reps are done, in the format asked: the run
table (rich, render/text/terminal.py), the result's JSON, or a dashboard's format
(render/text/dashboard_formats.py)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from jobbench.render.text import dashboard_formats
from jobbench.results.model import Result
from jobbench.results.store import print_json

if TYPE_CHECKING:
    from jobbench.render.text.terminal import Console


def show_result(doc: Result, fmt: str, console: Console | None, saved_to: str) -> None:
    """`doc` in `fmt` (table, json or a dashboard format: the request's list); the table on
    `console`, else a plain one."""
    if fmt == "json":
        print_json(doc)
    elif fmt in dashboard_formats.FORMATS:
        dashboard_formats.write(fmt, dashboard_formats.of_result(doc), sys.stdout)
    else:
        # rich, only for the table.
        from jobbench.render.text.terminal import render_result, stdout_console

        render_result(doc, console or stdout_console(), saved_to=saved_to)
