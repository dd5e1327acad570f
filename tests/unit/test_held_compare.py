"""Take-ahead's cost in a comparison (results/held_compare.py): the jobs each side held while a
slot was free elsewhere, and their extra wait, side by side in every format. Two simulated runs
of the real CLI in this process (`--target sim`: virtual time, no process), then the saved
comparison rendered as each format renders it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from jobbench.errors import EXIT_OK
from jobbench.render import renderer
from jobbench.results import store
from jobbench.results.compare import compare_docs
from jobbench.results.model import Comparison
from tests.unit.cli import run_cli
from tests.unit.test_compare_gate import steady, suite_doc

# Bursts of 12 jobs on 2 workers x 4 slots: a drain takes what its free slots allow and holds
# nothing; take-ahead takes a whole burst into one worker while the other has free slots.
HELD_SUITE = """
[suites.held]
reps = 2
latency = {take = 0.05, wake = 0.005}

[[suites.held.scenarios]]
name = "bursts"
workers = 2
slots = 4
job_seconds = 0.05
load = "bursts:12:every:0.5s:for:1s"
"""


@pytest.fixture(autouse=True)
def no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    # git and uname are processes, which unit tests never start
    monkeypatch.setattr(store, "_git_sha", lambda: "0" * 40)
    monkeypatch.setattr(store.platform, "platform", lambda: "Linux")


@pytest.fixture
def compared(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[Comparison, Path]:
    """`jobbench compare main pr --suite held --target sim --html page.html`: the saved
    comparison and the page."""
    (tmp_path / "jobbench.toml").write_text(HELD_SUITE)
    args = ("compare", "main", "pr", "--suite", "held", "--target", "sim", "--html", "page.html")
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == EXIT_OK
    capsys.readouterr()
    return store.read_comparison(tmp_path / "reports" / "main-vs-pr.json"), tmp_path / "page.html"


def render(comparison: Comparison, fmt: str, wide: bool = False) -> str:
    out = io.StringIO()
    renderer(fmt)(comparison, out, 100, wide)
    return out.getvalue()


def test_held_jobs_and_their_extra_wait_show_side_by_side_in_every_format(
    compared: tuple[Comparison, Path],
) -> None:
    comparison, page = compared
    document: dict[str, Any] = json.loads(render(comparison, "json"))
    held = document["rows"][0]["held"]
    jobs, wait = held["jobs"], held["extra_wait_p99_s"]
    assert jobs["baseline"] == 0 and jobs["candidate"] > 0  # the drain holds none
    assert jobs["difference"] == jobs["candidate"]
    assert wait["baseline"] is None and wait["candidate"] > 0  # no held job, no extra wait
    n, p99 = f"{jobs['candidate']:.0f}", f"{wait['candidate']:.3f} s"

    narrow = render(comparison, "table")
    assert max(len(line.rstrip()) for line in narrow.splitlines()) <= 100
    assert f"bursts: held 0 -> {n} (+{n}); held wait p99 - -> {p99} (-)" in narrow
    assert "held: jobs held in a take-ahead buffer while a slot was free elsewhere" in " ".join(
        narrow.split()
    )

    wide = render(comparison, "table", wide=True)
    head = next(line for line in wide.splitlines() if line.startswith("scenario")).split()
    at = head.index("held")  # "A held", then "B held", "change", "A held wait p99", ...
    assert head[at - 1 : at + 4] == ["A", "held", "B", "held", "change"]
    (line,) = (line for line in wide.splitlines() if line.startswith("bursts "))
    assert f" 0  {n:>6}  {'+' + n:>6}" in line and p99 in line

    markdown = render(comparison, "markdown")
    assert "| A held | B held | change | A held wait p99 | B held wait p99 | change |" in markdown
    assert f"| 0 | {n} | +{n} | - | {p99} | - |" in markdown

    lines = {r["metric"]: r for r in csv.DictReader(io.StringIO(render(comparison, "csv")))}
    assert lines["held_jobs"]["gated"] == "0"
    assert float(lines["held_jobs"]["baseline_median"]) == 0
    assert float(lines["held_jobs"]["candidate_median"]) == jobs["candidate"]
    assert float(lines["held_jobs"]["difference"]) == jobs["candidate"]
    assert lines["held_extra_wait_p99_s"]["baseline_median"] == ""
    assert float(lines["held_extra_wait_p99_s"]["candidate_median"]) == wait["candidate"]

    html = page.read_text()
    assert '<th colspan="3">held</th><th colspan="3">held wait p99</th>' in html
    assert f"<td>0</td><td>{n}</td><td>+{n}</td><td>-</td><td>{p99}</td><td>-</td>" in html


def test_a_row_without_held_figures_writes_no_held_key_and_shows_no_columns() -> None:
    """Results written before commit dba92ff have no held figures: nothing is invented for them."""
    comparison = compare_docs(
        suite_doc("a", {"deep": steady(10.0, 5)}), suite_doc("b", {"deep": steady(10.0, 5)})
    )
    assert "held" not in store.to_json(comparison)["rows"][0]
    for fmt, wide in (("table", False), ("table", True), ("markdown", False)):
        assert "held" not in render(comparison, fmt, wide)
    assert "held_jobs" not in render(comparison, "csv")
