"""Markdown comparison table: PR comments and $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

from typing import Any, TextIO

from jobbench.render.cells import HEADER, row_cells, title, verdict_lines


def render(comparison: dict[str, Any], out: TextIO, width: int = 100) -> None:
    del width  # Markdown wraps in the viewer
    out.write(f"### jobbench: {title(comparison)}\n\n")
    out.write("| " + " | ".join(HEADER) + " |\n")
    out.write("|" + "---|" * len(HEADER) + "\n")
    for row in comparison["rows"]:
        out.write("| " + " | ".join(row_cells(row)) + " |\n")
    out.write(
        "\nTimes are medians over reps: time until 99 % of the burst is done, and job "
        "end-to-end p50 / p99. Change = B/A - 1 with a bootstrap 95 % interval.\n"
    )
    lines = verdict_lines(comparison)
    if lines:
        out.write("\n" + "\n".join(f"- {line}" for line in lines) + "\n")
