"""`jobbench trend` and `jobbench bisect` on a history built here: a throwaway git repository
whose commits carry a command worker (tests/e2e/history_worker.py) and the factor its jobs' sleep
is multiplied by. Planted: a slowdown (x1.5) and, in the trend, a speedup back; every other commit
changes only a file no worker reads. Latencies scaled down, one worker, small bursts: each run
takes a second or two."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import run_jobbench, start_jobbench

# Each judges figures a busy machine disturbs (a bisection step is the gate's rule, which sets a
# rep the machine disturbed aside): with no other test beside them (tests/machine_share.py).
pytestmark = pytest.mark.quiet
WORKER = Path(__file__).with_name("history_worker.py")
SCENARIO = (
    "--worker", f"{sys.executable} worker.py", "-w", "1", "-s", "8", "-b", "16", "-j", "0.02",
    "--take-latency", "0.005", "--wake-latency", "0.002", "--hold", "1",
)  # fmt: skip


def build_history(repo: Path, factors: list[float], broken: frozenset[int] = frozenset()) -> None:
    """Commit i sets factor.txt to factors[i] (a noise-only commit keeps it and changes
    notes.txt); a commit in `broken` cannot start its worker. Commit 0 is tagged v0."""
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    shutil.copy(WORKER, repo / "worker.py")
    for index, factor in enumerate(factors):
        (repo / "factor.txt").write_text(f"{factor}\n")
        (repo / "notes.txt").write_text(f"commit {index}\n")
        (repo / "broken").unlink(missing_ok=True)
        if index in broken:
            (repo / "broken").write_text("yes\n")
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", f"commit {index} (x{factor})"], check=True)
    subprocess.run([*git, "tag", "v0", "HEAD~" + str(len(factors) - 1)], check=True)


def shas(repo: Path) -> list[str]:
    done = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--reverse", "HEAD"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.split()


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


def interrupted_after(run: subprocess.Popen[str], text: str, times: int = 1) -> str:
    """SIGINT once `text` is printed `times` (Ctrl-C, as CI cancels a job); stderr to the end."""
    assert run.stderr is not None
    seen = []
    for line in run.stderr:
        seen.append(line)
        times -= text in line
        if not times:
            run.send_signal(signal.SIGINT)
            break
    _, rest = run.communicate(timeout=60)
    return "".join(seen) + rest


def test_an_interrupted_bisect_and_trend_keep_what_they_finished_for_the_next_call(
    tmp_path: Path,
) -> None:
    """Exit 130 with what was finished saved: the same call again reuses it."""
    repo = tmp_path / "sdk"
    build_history(repo, [1.0] * 5 + [1.5] * 4)
    commits = shas(repo)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    bisect = ("bisect", "v0", "HEAD", "--repo", str(repo), *SCENARIO, "--json")
    said = interrupted_after(start_jobbench(*bisect, cwd=tmp_path, env=env), "step 2 (")
    assert "every step taken is saved" in said, said
    again = run_jobbench(*bisect, cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    assert f"{commits[-1][:12]}: regression" in again.stderr  # step 1, BAD, from its save
    assert "[from saved comparison" in again.stderr
    assert json.loads(again.stdout)["first_bad"]["commit"] == commits[5]

    trend = ("trend", "v0..HEAD", "--repo", str(repo), *SCENARIO, "--reps", "3")
    # Its second pair of commits begun: the first is saved.
    said = interrupted_after(start_jobbench(*trend, cwd=tmp_path, env=env), " of 9: ", 2)
    assert "interrupted" in said, said
    again = run_jobbench(*trend, cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    reused = int(again.stderr.split(" measured before on this machine")[0].split()[-1])
    assert reused >= 2, again.stderr  # the pair it finished, and what bisect measured
    assert "9 measured" in again.stdout
