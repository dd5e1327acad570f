"""The history example (examples/github-actions/perf-history.yml), its steps run as the runner
runs them: the results kept on a branch of their own between runs (real git, a local origin),
the trend call with flags jobbench accepts and its page where Pages takes it from, and a new
change point failing the run once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import run_jobbench
from tests.integration.workflow import HISTORY, git, load, run_script, step

WORKFLOW_ENV = {k: str(v) for k, v in load(HISTORY)["env"].items()}
CHECKOUT = "Check out the kept results"
KEEP = "Keep the results"


def history_step(name: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_script(step(name, HISTORY), cwd, {**WORKFLOW_ENV, **env})


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """The SDK repository on GitHub: a bare repo with main."""
    source = tmp_path / "source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    (source / "handler.py").write_text("VERSION = 1\n")
    git(source, "add", ".")
    git(source, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c1")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(bare))
    return bare


def fresh_run(tmp_path: Path, origin: Path, n: int) -> tuple[Path, dict[str, str]]:
    """A new runner: a fresh checkout of the SDK and an empty temp folder."""
    workspace, temp = tmp_path / f"work{n}", tmp_path / f"temp{n}"
    temp.mkdir()
    git(tmp_path, "clone", "-q", str(origin), str(workspace))
    return workspace, {"RUNNER_TEMP": str(temp), "GITHUB_SHA": "abc123"}


def kept(env: dict[str, str]) -> Path:
    return Path(env["RUNNER_TEMP"]) / "jobbench-data"


def test_the_results_build_up_on_their_branch_across_runs(tmp_path: Path, origin: Path) -> None:
    workspace, env = fresh_run(tmp_path, origin, 1)
    first = history_step(CHECKOUT, workspace, env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert [p.name for p in kept(env).iterdir()] == [".git"]  # a branch of its own, empty
    (kept(env) / "results").mkdir()
    (kept(env) / "results" / "sdk-c1.json").write_text("{}")
    saved = history_step(KEEP, workspace, env)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    branch = WORKFLOW_ENV["DATA"]
    assert git(origin, "show", f"{branch}:results/sdk-c1.json") == "{}"
    assert git(origin, "rev-list", "--count", branch) == "1"  # no SDK commit in its history

    workspace, env = fresh_run(tmp_path, origin, 2)
    again = history_step(CHECKOUT, workspace, env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (kept(env) / "results" / "sdk-c1.json").read_text() == "{}"
    (kept(env) / "results" / "sdk-c2.json").write_text("{}")
    assert history_step(KEEP, workspace, env).returncode == 0
    assert git(origin, "rev-list", "--count", branch) == "2"
    assert git(origin, "log", "-1", "--format=%s", branch) == "jobbench trend up to abc123"

    unchanged = history_step(KEEP, workspace, env)
    assert unchanged.returncode == 0 and "no new result to keep" in unchanged.stdout
    assert git(origin, "rev-list", "--count", branch) == "2"


def test_an_origin_that_does_not_answer_stops_the_run(tmp_path: Path, origin: Path) -> None:
    """Not taken for a first run: that would start the history afresh and measure it all."""
    workspace, env = fresh_run(tmp_path, origin, 1)
    git(workspace, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    done = history_step(CHECKOUT, workspace, env)
    assert done.returncode != 0
    assert "::error title=perf history::cannot ask origin for jobbench-data" in done.stdout
    assert not kept(env).exists()


def fake_jobbench(tmp_path: Path, code: int) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "jobbench"
    fake.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(tmp_path / 'argv.json')!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        f"sys.exit({code})\n"
    )
    fake.chmod(0o755)
    outputs = tmp_path / "github_output"
    outputs.touch()
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(outputs)}


def test_the_trend_keeps_its_results_and_writes_the_page_pages_publishes(tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**fake_jobbench(tmp_path, 1), "RUNNER_TEMP": str(temp)}
    done = history_step("Run the commits", tmp_path, env)
    assert done.returncode == 0, done.stdout + done.stderr  # the last step decides
    assert "exit-code=1\n" in Path(env["GITHUB_OUTPUT"]).read_text()
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[:2] == ["trend", f"{WORKFLOW_ENV['SINCE']}..HEAD"]
    flags = dict(zip(argv[2::2], argv[3::2], strict=False))
    assert flags["--out"] == str(kept({"RUNNER_TEMP": str(temp)}) / "results")
    assert flags["--html"] == str(temp / "site" / "index.html")
    assert "--fail-on-change" in argv and (temp / "site").is_dir()
    (pages,) = [
        s for s in load(HISTORY)["jobs"]["trend"]["steps"] if "pages-art" in s.get("uses", "")
    ]
    assert pages["with"]["path"] == "${{ runner.temp }}/site"

    # The same argv, given to the real CLI in a repository without those commits: the only
    # error left is the range, so every flag and value was accepted.
    git(tmp_path, "init", "-q")
    real = run_jobbench(*argv, cwd=tmp_path, timeout_s=60)
    assert real.returncode == 2, real.stderr
    error = real.stderr.strip()
    assert error.startswith("error: REVRANGE "), error
    assert not [flag for flag in argv if flag.startswith("--") and flag in error], error


@pytest.mark.parametrize(
    ("code", "step_code", "annotation"),
    [
        ("0", 0, None),
        ("1", 1, "::error title=perf change point::a new slowdown on main"),
        ("3", 0, "::warning title=perf history::--budget ran out"),
        ("2", 1, "::error title=perf history failed::jobbench trend exited 2"),
        ("", 1, "::error title=perf history failed::jobbench trend exited nothing"),
    ],
    ids=["nothing new", "a new change point", "budget spent", "usage error", "did not run"],
)
def test_the_run_fails_once_on_a_new_change_point(
    tmp_path: Path, code: str, step_code: int, annotation: str | None
) -> None:
    done = history_step("Fail on a new change point", tmp_path, {"CODE": code})
    assert done.returncode == step_code, done.stdout + done.stderr
    said = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert said == ([] if annotation is None else [said[0]])
    if annotation is not None:
        assert said[0].startswith(annotation), said
