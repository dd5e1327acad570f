"""The comparison tables at a fixed width, against golden files (rich's own tests do this).

Regenerate after an intended change:
    JOBBENCH_UPDATE_GOLDEN=1 pytest tests/unit/test_render_compare.py
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from jobbench.render import renderer
from jobbench.render.words.cells import legend, verdict_lines
from jobbench.results.model import Comparison
from jobbench.verdict.comparison import compare_docs
from jobbench.verdict.gate import GateConfig, judge
from jobbench.verdict.stops import Stops
from tests.unit.test_compare_gate import steady, suite_doc

GOLDEN = Path(__file__).parent / "golden"


def comparison() -> Comparison:
    """Three rows that cover the verdicts: a stalled baseline rep, a noisy shallow row gated on
    the pooled mean, and a steady pass."""
    base = suite_doc(
        "main",
        {
            "1w-512j-0.5s": [*steady(23.2, 6), 81.0],
            "4w-64j-0.5s-shallow": [0.56, 0.60, 0.64, 0.58, 0.66, 0.60],
            "1w-256j-2s": steady(19.56, 6),
        },
    )
    cand = suite_doc(
        "slower-recheck",
        {
            "1w-512j-0.5s": steady(38.2, 7),
            "4w-64j-0.5s-shallow": [0.57, 0.61, 0.62, 0.60, 0.65, 0.63],
            "1w-256j-2s": steady(19.58, 6),
        },
    )
    doc = compare_docs(
        base,
        cand,
        metric_for=lambda n: "e2e_mean_s" if "shallow" in n else "time_to_p99_s",
        stops=Stops(otherwise="a side is a saved result: no reps were added"),
    )
    judge(doc, GateConfig())
    return doc


def rendered(fmt: str, wide: bool = False) -> str:
    out = io.StringIO()
    renderer(fmt)(comparison(), out, 100, wide)
    return out.getvalue()


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("JOBBENCH_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; see the module docstring to regenerate"


@pytest.mark.parametrize(
    ("fmt", "wide", "name"),
    [
        ("table", False, "compare_table.txt"),
        ("table", True, "compare_table_wide.txt"),
        ("markdown", False, "compare.md"),
        ("csv", False, "compare.csv"),
    ],
)
def test_comparison_renders_as_its_golden_file(fmt: str, wide: bool, name: str) -> None:
    check_golden(name, rendered(fmt, wide))


def test_the_narrow_table_fits_100_columns_and_names_its_figures() -> None:
    text = rendered("table")
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    header = next(line for line in text.splitlines() if line.startswith("scenario"))
    assert header.split() == ["scenario", "gated", "on", "A", "B", "change", "95", "%", "CI",
                              "noise", "verdict"]  # fmt: skip
    assert "p99" not in header  # the metric is named in its column and the legend
    assert "99 % done = time until 99 % of the burst is done" in " ".join(text.split())
    assert "A rep 7 (outlier, +249% off the median)" in " ".join(text.split())


def test_the_wide_table_adds_every_metric_and_the_reps() -> None:
    text = rendered("table", wide=True)
    header = next(line for line in text.splitlines() if line.startswith("scenario"))
    for column in ("reps A/B", "set aside", "detectable", "A e2e p99", "eff B"):
        assert column in header


def test_the_title_names_each_sides_workers() -> None:
    doc = comparison()
    doc.candidate.workers = ["model worker (take-ahead, take-ahead 32)"]
    out = io.StringIO()
    renderer("table")(doc, out, 100, False)
    lines = out.getvalue().splitlines()
    head = lines[: next(i for i, line in enumerate(lines) if line.startswith("scenario"))]
    assert " ".join(line.strip() for line in head) == (
        "A = main (baseline: model worker (p)), B = slower-recheck (candidate: model worker "
        "(take-ahead, take-ahead 32))"
    )


def test_the_verdict_column_says_the_word_the_verdict_lines_say() -> None:
    """One word per verdict: the table's cell is the verdict text's word (REGRESSION in capitals
    to stand out), never another one such as "ok"."""
    doc = comparison()
    text = rendered("table")
    rows = [line.split() for line in text.splitlines() if line.split()[:1] in (["1w-512j-0.5s"],
            ["4w-64j-0.5s-shallow"], ["1w-256j-2s"])]  # fmt: skip
    cells = {row[0]: row[-1] for row in rows}
    for row in doc.rows:
        line = next(v for v in verdict_lines(doc) if v.startswith(f"{row.scenario}: "))
        word = line.split(": ")[1]
        assert cells[row.scenario].lower() == word == row.verdict, (cells, line)
    legend = " ".join(text.split())
    for word in ("REGRESSION =", "better =", "pass =", "inconclusive ="):
        assert word in legend


def test_the_legend_defines_every_column_of_each_table() -> None:
    narrow = " ".join(rendered("table").split())
    wide = " ".join(rendered("table", wide=True).split())
    markdown = rendered("markdown")
    for clause in ("A, B: median over the reps that count", "change: B/A - 1", "noise:"):
        assert clause in narrow and clause in wide and clause in markdown
    wide_only = (
        "reps A/B: reps each side ran",
        "set aside: reps that do not count",
        "detectable: the smallest slowdown these reps flag with 95 % power",
        "ideal = wake + ceil(burst / (workers x slots)) x job",
        "eff A, eff B = ideal / that side's time to 99 %",
    )
    for clause in wide_only:  # the narrow table has none of these columns
        assert clause in wide and clause in markdown and clause not in narrow
    assert legend(comparison()) == legend(comparison(), wide=True)  # the page's wide table
