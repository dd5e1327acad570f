"""The PR comment as GitHub shows it: the gate's Markdown body rendered by a CommonMark renderer
with GitHub's table extension (markdown-it-py), styled as a comment's body is (14 px text, cells
padded 6 x 13 px, a table a block that scrolls inside itself), in headless Chromium 780 px wide,
a comment's column. Everything above the folded <details> must fit: no table scrolls sideways,
and the page does not either; the verdict is the first line.

Needs Chromium on PATH (Debian: `apt-get install -y chromium`); `.ci/run` installs it."""

from __future__ import annotations

import html
import io
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from jobbench.render import renderer
from jobbench.results.model import Comparison
from jobbench.verdict.comparison import compare_docs
from jobbench.verdict.gate import GateConfig, judge
from tests.e2e.test_report_browser import FLAGS
from tests.programs import CHROMIUM, needs
from tests.unit.test_compare_gate import steady, suite_doc

pytestmark = needs(CHROMIUM)
COLUMN_PX = 780
# What GitHub's stylesheet does to a comment's Markdown, the parts that decide its width.
STYLE = """
body { margin: 0; }
.markdown-body { box-sizing: border-box; width: 780px; padding: 16px;
  font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.markdown-body table { display: block; width: max-content; max-width: 100%; overflow: auto;
  border-collapse: collapse; border-spacing: 0; }
.markdown-body td, .markdown-body th { padding: 6px 13px; border: 1px solid #d0d7de; }
.markdown-body code { font: 85% ui-monospace, SFMono-Regular, Menlo, monospace;
  padding: 0.2em 0.4em; }
"""
CHECK = """
const out = {width: innerWidth, page: [document.documentElement.scrollWidth,
  document.documentElement.clientWidth], scrolls: [], first: ""};
for (const el of document.querySelector(".markdown-body").querySelectorAll("*")) {
  if (el.closest("details") || el.clientWidth === 0) continue;
  if (el.scrollWidth > el.clientWidth)
    out.scrolls.push(`${el.tagName} ${el.scrollWidth} > ${el.clientWidth}: ` +
      el.textContent.slice(0, 60));
}
out.first = document.querySelector(".markdown-body > *").textContent;
const pre = document.createElement("pre");
pre.id = "comment-check";
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
"""


def gate_suite_comparison() -> Comparison:
    """The default suite's five rows, the longest names a comment shows, a regression."""
    rows = {
        "1w-512j-0.5s": (23.17, 25.40),
        "1w-256j-2s": (26.65, 21.76),
        "4w-1024j-0.5s": (11.16, 12.22),
        "4w-64j-0.5s-shallow": (0.661, 0.625),
        "1w-8slots-poisson-1jps-2s-trickle": (2.145, 2.153),
    }
    base = suite_doc("07fc6e2b02b6", {name: steady(a, 10) for name, (a, _) in rows.items()})
    cand = suite_doc("1cc5b3bb66e9", {name: steady(b, 10) for name, (_, b) in rows.items()})
    comparison = compare_docs(base, cand)
    judge(comparison, GateConfig())
    comparison.baseline.name = "base 07fc6e2 (merge base)"
    comparison.candidate.name = "head 1cc5b3b"
    comparison.wall_s = 535.0
    return comparison


def shown(markdown: str, folder: Path) -> dict[str, Any]:
    """The comment rendered and laid out at the column's width: what CHECK found."""
    body = MarkdownIt("commonmark").enable("table").render(markdown)
    page = folder / "comment.html"
    page.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><style>{STYLE}</style></head>"
        f"<body><div class='markdown-body'>{body}</div><script>{CHECK}</script></body></html>"
    )
    where = [f"--user-data-dir={folder / 'profile'}", f"--window-size={COLUMN_PX},1200"]
    done = subprocess.run(
        [CHROMIUM, *FLAGS, *where, "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    found = re.search(r'<pre id="comment-check">(.*?)</pre>', done.stdout, flags=re.S)
    assert found, f"the check did not run (exit {done.returncode}): {done.stderr[-2000:]}"
    result: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    assert result["width"] == COLUMN_PX, result
    subprocess.run(
        [CHROMIUM, *FLAGS, *where, f"--screenshot={folder / 'comment.png'}", page.as_uri()],
        capture_output=True, timeout=120,
    )  # fmt: skip
    return result


def test_the_comment_opens_with_the_verdict_and_nothing_scrolls_sideways(tmp_path: Path) -> None:
    out = io.StringIO()
    renderer("markdown")(gate_suite_comparison(), out)
    markdown = out.getvalue()
    first = markdown.splitlines()[0]
    assert first.startswith("### ❌ regression: ") and first.endswith(", 8.9 min")
    assert "slower in 1w-512j-0.5s, 4w-1024j-0.5s" in first  # the reason, in words
    assert "**A** `base 07fc6e2 (merge base)` (baseline) · **B** `head 1cc5b3b`" in markdown
    table = [line for line in markdown.split("<details>")[0].splitlines() if line.startswith("|")]
    assert all(line.count(" | ") + 1 <= 7 for line in table)  # at most 7 columns
    result = shown(markdown, tmp_path)
    assert result["first"] == first.removeprefix("### ")
    scroll, client = result["page"]
    assert scroll <= client, f"the page scrolls sideways: {scroll} px in {client} px"
    assert result["scrolls"] == [], "\n".join(result["scrolls"])
    assert (tmp_path / "comment.png").is_file()


def test_the_check_sees_a_table_that_scrolls(tmp_path: Path) -> None:
    """Proof the check above can fail: the wide table, unfolded, is wider than the column."""
    out = io.StringIO()
    renderer("markdown")(gate_suite_comparison(), out)
    unfolded = out.getvalue().replace("<details>", "").replace("</details>", "")
    unfolded = re.sub(r"<summary>.*?</summary>", "", unfolded)
    result = shown(unfolded, tmp_path)
    assert any(line.startswith("TABLE") for line in result["scrolls"]), result
