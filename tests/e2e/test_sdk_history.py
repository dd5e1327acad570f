"""`jobbench trend` and `jobbench bisect` on a history built here: a throwaway git repository
whose commits carry a command worker (tests/e2e/history_worker.py) and the factor its jobs' sleep
is multiplied by; every other commit changes only a file no worker reads. Latencies scaled down,
one worker, small bursts: each run takes a second or two.

Here: what an interrupted search keeps for the next call. Whether the search finds the planted
slowdown is judged on measured times that other tests beside it disturb:
benchmarks/timed/test_history_timing.py, run one at a time by benchmarks/timed_checks.py."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import run_jobbench, start_jobbench

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


@pytest.mark.quiet  # each step is the gate's verdict: a rep the tests beside it fill is set aside
def test_an_interrupted_bisect_keeps_its_steps_for_the_next_call(tmp_path: Path) -> None:
    """Exit 130 with the steps taken saved: the same call again reuses them. A slowdown of x3
    at the second of 3 commits: the search gets past its first step (BAD against GOOD) and
    ends at its second, the fewest steps that leave one to interrupt; it runs with the machine
    to itself, and each step more kept every other test waiting."""
    repo = tmp_path / "sdk"
    build_history(repo, [1.0, 3.0, 3.0])
    commits = shas(repo)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    bisect = ("bisect", "v0", "HEAD", "--repo", str(repo), *SCENARIO, "--json")
    said = interrupted_after(start_jobbench(*bisect, cwd=tmp_path, env=env), "step 2 (")
    assert "every step taken is saved" in said, said
    again = run_jobbench(*bisect, cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    # Step 1 (BAD against GOOD) from its save; which commit the search then finds is checked
    # over 16 commits in benchmarks/timed/test_history_timing.py.
    (step_1,) = [line for line in again.stderr.splitlines() if line.startswith("step 1 (")]
    assert commits[-1][:12] in step_1, again.stderr
    assert "[from saved comparison" in again.stderr
    assert json.loads(again.stdout)["first_bad"]["commit"] in commits[1:]


def test_an_interrupted_trend_keeps_its_commits_for_the_next_call(tmp_path: Path) -> None:
    """Exit 130 with the commits measured saved: the same call again reuses them. A trend
    judges no step, so it runs beside other tests."""
    repo = tmp_path / "sdk"
    build_history(repo, [1.0] * 2 + [3.0] * 2)  # two pairs: one saved, one run again
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    trend = ("trend", "v0..HEAD", "--repo", str(repo), *SCENARIO, "--reps", "3")
    # Its second pair of commits begun: the first is saved.
    said = interrupted_after(start_jobbench(*trend, cwd=tmp_path, env=env), " of 4: ", 2)
    assert "interrupted" in said, said
    again = run_jobbench(*trend, cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    reused = int(again.stderr.split(" measured before on this machine")[0].split()[-1])
    assert reused >= 2, again.stderr  # the pair it finished
    assert "4 measured" in again.stdout
    # What a nightly job sends a dashboard: the newest commit's rows, every commit reused.
    sent = run_jobbench(*trend, "--format", "github-action-benchmark", cwd=tmp_path, env=env)
    assert sent.returncode == 0, sent.stderr
    (figure,) = json.loads(sent.stdout)
    assert figure["name"] == "1w-16j-0.02s time to 99 % done" and figure["unit"] == "s"
