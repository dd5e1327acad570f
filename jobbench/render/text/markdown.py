"""Markdown comparison table: PR comments and $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

from typing import TextIO

from jobbench.render.words.cells import header, legend, row_cells, title, verdict_lines
from jobbench.results.model import Comparison


def render(comparison: Comparison, out: TextIO, width: int = 100, wide: bool = True) -> None:
    """Always the wide table: Markdown wraps in the viewer."""
    del width, wide
    cells = header(comparison, True)
    out.write(f"### jobbench: {title(comparison)}\n\n")
    out.write("| " + " | ".join(cells) + " |\n")
    out.write("|" + "---|" * len(cells) + "\n")
    for row in comparison.rows:
        out.write("| " + " | ".join(row_cells(row, comparison, True)) + " |\n")
    out.write("\n" + "\n\n".join(legend(comparison)) + "\n")  # a paragraph per line
    lines = verdict_lines(comparison)
    if lines:
        out.write("\n" + "\n".join(f"- {line}" for line in lines) + "\n")
