"""What a compare or gate call writes and shows as text beside its JSON: the Markdown saved as
`<A>-vs-<B>.md` (also the PR-comment body of --markdown and the Actions job summary), and the
asked format on stdout. With a suite's other variants (docs/fixes.md), their side-by-side table
is saved as `<A>-vs-<B>.<suite>.md` and follows A against B in each Markdown, so a PR comment
shows every variant too, and follows the table and Markdown formats on stdout."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

from jobbench.render import renderer
from jobbench.render.text.side_by_side_text import render_side_by_side
from jobbench.results.model import Comparison
from jobbench.results.store import comparison_stem, safe_label
from jobbench.verdict.side_by_side import SideBySide


def save_markdown(
    comparison: Comparison,
    table: SideBySide | None,
    out: Path,
    suite: str,
    also: Path | None = None,
    job_summary: bool = False,
) -> None:
    """`<A>-vs-<B>.md` in `out` (and the side-by-side table's own file), a copy at `also`
    (--markdown), and with `job_summary` (a gate's) the Actions job summary when there is one."""
    markdown = _markdown(comparison)
    if table is not None:
        every_variant = _side_by_side_markdown(table, suite)
        _side_by_side_path(comparison, out, suite).write_text(every_variant)
        markdown += f"\n{every_variant}"
    (out / f"{comparison_stem(comparison)}.md").write_text(markdown)
    if also is not None:
        also.write_text(markdown)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file and job_summary:
        with open(summary_file, "a") as handle:
            handle.write(markdown + "\n")


def show(
    comparison: Comparison,
    table: SideBySide | None,
    fmt: str,
    wide: bool,
    out: Path,
    suite: str,
) -> None:
    """The comparison on stdout in `fmt`, then the side-by-side table in the table and
    Markdown formats (the JSON and CSV ones stay one document on stdout)."""
    renderer(fmt)(comparison, sys.stdout, _width(), wide)
    if table is not None and fmt in ("table", "markdown"):
        path = _side_by_side_path(comparison, out, suite)
        sys.stdout.write(f"\n{suite}: every variant side by side ({path})\n\n")
        render_side_by_side(table, sys.stdout, markdown=fmt == "markdown")


def _side_by_side_path(comparison: Comparison, out: Path, suite: str) -> Path:
    return out / f"{comparison_stem(comparison)}.{safe_label(suite)}.md"


def _side_by_side_markdown(table: SideBySide, suite: str) -> str:
    """Every variant of the suite on one table (docs/fixes.md), in Markdown."""
    buffer = io.StringIO()
    render_side_by_side(table, buffer, markdown=True)
    return f"### {suite}: every variant side by side\n\n{buffer.getvalue()}"


def _markdown(comparison: Comparison) -> str:
    buffer = io.StringIO()
    renderer("markdown")(comparison, buffer)
    return buffer.getvalue()


def _width() -> int:
    try:
        return max(100, os.get_terminal_size().columns)
    except OSError:
        return 160
