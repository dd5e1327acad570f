"""The sweep's heatmap page in a real browser (the checks of test_report_browser.py): Chromium
draws it with no console message, in colour, and at 1,400 px nothing overflows and no label
is clipped, with long latency values on both axes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.helpers import run_jobbench
from tests.e2e.test_report_browser import assert_fits, console_lines, layout, pixels, screenshot
from tests.machine_share import MachineShare
from tests.programs import CHROMIUM, needs

pytestmark = needs(CHROMIUM)
SWEEP = (
    "sweep", "--workers", "1,2,4,8", "--slots", "4,8", "--take-ahead", "0,4", "--burst", "32",
    "--job-seconds", "0.02,0.05", "--wake-latency", "0.005", "--hold", "2", "--take-latency",
    "0.02", "--take-latency", "uniform:0.01,0.03", "--reps", "2", "--seed", "3",
)  # fmt: skip


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, machine_share: MachineShare) -> Path:
    with machine_share.shared():
        return _folder(tmp_path_factory.mktemp("sweep"))


def _folder(here: Path) -> Path:
    done = run_jobbench(*SWEEP, "--html", "sweep.html", cwd=here, timeout_s=180)
    assert done.returncode == 0, done.stderr
    x_latency = ("--x", "take-latency", "--y", "slots", "--color", "efficiency")
    done = run_jobbench(*SWEEP, "--html", "latency.html", *x_latency, cwd=here, timeout_s=180)
    assert done.returncode == 0, done.stderr
    return here


def test_chromium_draws_the_heatmap_with_no_console_errors(folder: Path, tmp_path: Path) -> None:
    log = screenshot((folder / "sweep.html").as_uri(), tmp_path / "sweep.png")
    assert console_lines(log) == [], "\n".join(console_lines(log))
    seen = pixels(tmp_path / "sweep.png")
    assert len(seen) >= 50, f"only {len(seen)} distinct colours: no heatmap?"


@pytest.mark.parametrize("name", ["sweep.html", "latency.html"])
def test_the_heatmap_pages_fit_1400_px(folder: Path, name: str) -> None:
    result = layout(folder / name)
    assert result["texts"] > 50  # it measured the page
    assert_fits(result)
