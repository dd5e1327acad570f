"""All output: text (the terminal, Markdown, CSV, JSON: render.text), the HTML page
(render.page) and the words both share (render.words). Here, the comparison formats' registry:
one module per format behind one signature, render(comparison, out, width, wide).

rich is imported only by render/text/terminal.py, and only when the table format is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:
    from jobbench.results.model import Comparison


class Renderer(Protocol):
    def __call__(
        self, comparison: Comparison, out: TextIO, width: int = 100, wide: bool = False
    ) -> None: ...


FORMATS = {
    "table": ("jobbench.render.text.terminal", "render_comparison"),
    "markdown": ("jobbench.render.text.markdown", "render"),
    "json": ("jobbench.render.text.json_format", "render"),
    "csv": ("jobbench.render.text.csv_format", "render"),
    "bmf": ("jobbench.render.text.dashboard_formats", "render_bmf"),
    "github-action-benchmark": (
        "jobbench.render.text.dashboard_formats",
        "render_github_action_benchmark",
    ),
}


def renderer(fmt: str) -> Renderer:
    module, name = FORMATS[fmt]
    fn: Renderer = getattr(importlib.import_module(module), name)
    return fn
