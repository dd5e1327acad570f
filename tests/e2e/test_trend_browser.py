"""The trend's page in a real browser (the checks of test_report_browser.py): Chromium draws it
with no console message, and at 1,400 px nothing overflows and no label is clipped, with long
tags, long subjects, 120 commits and change points near both edges."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from jobbench.render.page.trend_page import write_trend_page
from jobbench.verdict.change_points import Commit, Point, Series, change_points
from tests.e2e.test_report_browser import assert_fits, console_lines, layout, pixels, screenshot
from tests.programs import CHROMIUM, needs

pytestmark = needs(CHROMIUM)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(4)
    count = 120
    commits = [
        Commit(
            f"{i:012x}".ljust(40, "0"),
            f"Merge pull request #{4000 + i} from runpod/a-rather-long-branch-name-{i}",
            f"v1.{i // 10}.{i % 10}-release-candidate-build" if i % 10 == 0 else None,
        )
        for i in range(count)
    ]
    levels = {
        "4w-1024j-0.5s": [1.0] * 3 + [1.4] * 60 + [1.1] * 57,
        "1w-8slots-trickle": [2.0] * 117 + [2.6] * 3,
    }
    series, points = [], []
    for name, row in levels.items():
        metric = "time_to_p99_s" if name.startswith("4w") else "steady_e2e_p99_s"
        shown = tuple(
            Point(i, tuple(level * (1 + rng.gauss(0, 0.01)) for _ in range(5)))
            for i, level in enumerate(row)
            if i % 17 != 5  # a commit that was skipped: a gap
        )
        series.append(Series(name, metric, shown))
        points += change_points(series[-1], 0.05)
    assert len(points) >= 3
    folder = tmp_path_factory.mktemp("trend")
    notes = [
        "120 commits, 113 measured",
        "5 reps a row per commit; change points by the L1 Potts model",
    ]
    return write_trend_page(
        folder / "trend.html", "runpod-python v1.0.0..main", commits, series, points, notes
    )


def test_chromium_draws_the_trend_with_no_console_errors(page: Path, tmp_path: Path) -> None:
    log = screenshot(page.as_uri(), tmp_path / "trend.png")
    assert console_lines(log) == [], "\n".join(console_lines(log))
    assert len(pixels(tmp_path / "trend.png")) >= 8, "too few colours: no plot?"


def test_the_trend_page_fits_1400_px(page: Path) -> None:
    result = layout(page)
    assert result["texts"] > 30  # it measured the page
    assert_fits(result)
