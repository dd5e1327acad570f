"""The HTML report of real runs: `jobbench run --html` and `jobbench compare --html` pages
(one SVG per plot, nothing fetched, dark mode, both sides of a comparison) and `jobbench report`
on a saved comparison. Generated results are tested in tests/unit/test_html_report.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from jobbench.commands.report import ReportRequest, report_command
from jobbench.errors import UsageError
from jobbench.render.page.rep_strip import machine_text
from jobbench.results.store import read_result
from tests.e2e.helpers import run_jobbench
from tests.unit.test_html_report import PLOTS, labels, plotted, rep_blocks, svgs

RUN = [
    "run", "--worker", "model", "--policy", "drain", "--workers", "2", "--slots", "4",
    "--burst", "32", "--job-seconds", "0.02", "--take-latency", "0.02",
    "--wake-latency", "0.005", "--hold", "2", "--reps", "2", "--out", "reports",
]  # fmt: skip


def jobbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_jobbench(*args, cwd=cwd, timeout_s=180)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real results: x (drain, page written by `run --html`), y (take-ahead), x-vs-y. Beside
    other tests: a rep they disturbed is set aside, which the tests read from x's result."""
    return _folder(tmp_path_factory.mktemp("report"))


def set_aside(folder: Path) -> int:
    """x's reps set aside because the machine was full (other tests run beside these)."""
    reps = json.loads((folder / "reports" / "x.json").read_text())["scenarios"][0]["reps"]
    return sum(any(a["kind"] == "saturated" for a in rep.get("anomalies", [])) for rep in reps)


def _folder(cwd: Path) -> Path:
    done = jobbench(*RUN, "--label", "x", "--html", "x.html", cwd=cwd)
    assert done.returncode == 0, done.stderr
    ahead = ["--policy", "take-ahead", "--take-ahead", "4", "--label", "y"]
    done = jobbench(*RUN, *ahead, cwd=cwd)
    assert done.returncode == 0, done.stderr
    done = jobbench("compare", "x", "y", "--html", "xy.html", "--format", "json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return cwd


def test_run_html_has_one_svg_per_plot(folder: Path) -> None:
    page = (folder / "x.html").read_text()
    assert len(svgs(plotted(page))) == len(PLOTS)
    for plot, label in zip(PLOTS, labels(plotted(page))):
        assert plot in label
    assert "time to 99 %" in page
    if not set_aside(folder):  # one table of figures; a set-aside rep adds what it says of it
        assert page.count('<table class="num">') == 1
    assert "x: rep 2 of 2" in page  # says which rep the plots show
    doc = json.loads((folder / "reports" / "x.json").read_text())
    p99 = doc["scenarios"][0]["summary"]["time_to_p99_s"]["median"]
    assert f"{p99:.3f} s" in page
    assert f"ideal {doc['scenarios'][0]['ideal_s']:.3f} s" in page


def test_page_is_self_contained(folder: Path) -> None:
    for name in ("x.html", "xy.html"):
        page = (folder / name).read_text()
        assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, flags=re.I)
        assert not re.search(r"url\(|@import|<script|<link|<img|<iframe", page, flags=re.I)
        assert "http://" not in page and "https://" not in page
        assert "default-src 'none'" in page  # CSP: the browser may fetch nothing at all


def test_dark_mode_uses_css_variables(folder: Path) -> None:
    page = (folder / "x.html").read_text()
    style = page[page.index("<style>") : page.index("</style>")]
    assert "@media (prefers-color-scheme:dark)" in style
    assert "color-scheme" in page and "currentColor" in style
    dark = style[style.index("prefers-color-scheme:dark") :]
    for var in ("--bg", "--fg", "--a", "--b", "--grid"):
        assert var in dark
    for chunk in svgs(page):  # marks carry classes, colours come from the stylesheet
        assert not re.search(r'(fill|stroke)="#', chunk)


def test_comparison_page_has_both_sides_on_shared_axes(folder: Path) -> None:
    page = (folder / "xy.html").read_text()
    found = labels(plotted(page))
    assert len(found) == len(PLOTS) + 1  # a timeline per side, the rest overlaid
    assert "slot timeline of A = x" in found[0] and "slot timeline of B = y" in found[1]
    assert "A = x" in page and "B = y" in page and "B vs A" in page
    for chunk in svgs(plotted(page))[2:]:
        assert ' a"' in chunk and ' b"' in chunk  # both sides drawn on each overlay
    (rep_1,) = rep_blocks(page).values()  # rep 2 is plotted in full: rep 1 in its block
    assert [label.split(":")[0] for label in labels(rep_1)] == [
        "slot timeline of A = x",
        "slot timeline of B = y",
        "completion",
    ]


def test_every_rep_shows_the_machine_load_it_recorded(folder: Path) -> None:
    """A real run records how busy the machine was during each rep; the page shows it."""
    page = (folder / "x.html").read_text()
    reps = read_result(folder / "reports" / "x.json").scenarios[0].reps
    assert len(reps) == 2
    for rep in reps:
        machine = rep.machine
        assert machine is not None and machine.cpus == os.cpu_count()
        # a figure was read; it can be 0: a 0.17 s rep is 34 ticks of /proc/stat's 100 Hz on 2
        # CPUs, and these workers are busy for a few milliseconds of it
        assert machine.cpu_busy is not None and 0.0 <= machine.cpu_busy <= 1.0
        assert machine.load1_start is not None and machine.load1_end is not None
        assert f'<td class="txt">{machine_text(machine)}</td>' in page
    assert "every rep: time to 99 % done" in page
    assert f">counted ({2 - set_aside(folder)})" in page


def test_report_command_reads_a_comparison_file_and_a_rep(folder: Path) -> None:
    out = folder / "again.html"
    code = report_command(ReportRequest("x-vs-y", out, out=folder / "reports", rep=1))
    assert code == 0
    page = out.read_text()
    assert "A = x: rep 1 of 2" in page and "B = y: rep 1 of 2" in page
    with pytest.raises(UsageError, match="--rep 3"):
        report_command(ReportRequest("x", out, out=folder / "reports", rep=3))
