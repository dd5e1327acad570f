"""`jobbench bisect` and `jobbench trend` find a planted slowdown (x1.5) and, in the trend, a
speedup back, among commits that change nothing a worker reads (the history of
tests/e2e/test_sdk_history.py). Their verdicts rest on measured times, so they run here with the
machine to themselves (benchmarks/timed_checks.py); the change-point and bisection rules are
unit-tested in tests/unit/test_trend.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.helpers import run_jobbench
from tests.e2e.test_sdk_history import SCENARIO, build_history, shas


def test_bisect_finds_the_planted_slowdown_in_16_commits_and_skips_a_broken_one(
    tmp_path: Path,
) -> None:
    """GOOD and 16 commits; the 11th slows every job by half; the 8th, where the search looks
    second, does not start (skipped, its neighbour taken): 6 steps, the skip among them."""
    repo = tmp_path / "sdk"
    build_history(repo, [1.0] * 11 + [1.5] * 6, broken=frozenset({8}))
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = run_jobbench(
        "bisect", "v0", "HEAD", "--repo", str(repo), *SCENARIO, "--json", cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    commits = shas(repo)
    assert found["first_bad"]["commit"] == commits[11]
    assert found["first_bad"]["subject"] == "commit 11 (x1.5)"
    assert 0.3 < found["first_bad"]["change"] < 0.7  # jobs 1.5 x as long, plus fixed costs
    steps = found["steps"]
    assert len(steps) <= 6, steps
    assert steps[0]["commit"] == commits[16] and steps[0]["verdict"] == "regression"
    assert {"commit": commits[8], "verdict": "skip", "change": None} in steps
    for step in steps:
        index = commits.index(step["commit"])
        if step["verdict"] != "skip":
            assert step["verdict"] == ("regression" if index >= 11 else "pass"), step
    assert "cannot start" in done.stderr or "skipped" in done.stderr
    assert (
        tmp_path / "reports" / f"sdk-{commits[0][:12]}-vs-sdk-{commits[11][:12]}.json"
    ).is_file()


def test_trend_marks_the_slowdown_and_the_speedup_and_nothing_in_the_noise(
    tmp_path: Path,
) -> None:
    """Ten commits: four at x1, three at x1.5, three back at x1. The trend's change points are
    the slowdown and the speedup, none among the noise-only commits; a second call runs nothing
    (every commit saved) and, with --fail-on-change, fails only on a slowdown not reported
    before."""
    repo = tmp_path / "sdk"
    build_history(repo, [1.0] * 4 + [1.5] * 3 + [1.0] * 3)
    commits = shas(repo)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = ("trend", "v0..HEAD", "--repo", str(repo), *SCENARIO, "--reps", "3")
    done = run_jobbench(*args, "--json", "--fail-on-change", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stderr  # the slowdown is new
    assert "new slowdown: " in done.stderr
    doc = json.loads(done.stdout)
    assert set(doc) == {"commits", "change_points"}
    assert [c["commit"] for c in doc["commits"]] == commits  # the start first
    assert doc["commits"][0]["ref"] == "v0"
    points = [(p["commit"], p["direction"]) for p in doc["change_points"]]
    assert points == [(commits[4], "slower"), (commits[7], "faster")], doc["change_points"]
    for point in doc["change_points"]:
        assert set(point) == {
            "commit", "ref", "scenario", "metric", "before", "after", "change", "direction"
        }  # fmt: skip
        assert point["metric"] == "time_to_p99_s" and point["scenario"] == "1w-16j-0.02s"
    again = run_jobbench(*args, "--fail-on-change", "--html", "trend.html", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr  # reported before: not new
    assert "10 measured (0 run now, 10 saved before)" in again.stdout
    assert "slower" in again.stdout and "faster" in again.stdout
    page = (tmp_path / "trend.html").read_text()
    assert page.count('class="cp slower"') == 1 and page.count('class="cp faster"') == 1
    assert "commit 4 (x1.5)" in page  # a subject, in a hover text
