"""The action's cache of jobbench's worktrees: the paths its plan step names, saved and restored
into a fresh clone of the next run, give worktrees jobbench reuses; and its prune step keeps only
this run's two commits. Real git, jobbench's own worktree code, the action's own steps."""

from __future__ import annotations

import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobbench.core.sdk.gitrefs import worktree_for
from jobbench.errors import UsageError
from tests.integration.fake_github import FakeGitHub, Runner, pr_event, serve
from tests.integration.workflow import ACTION, git, step

RESTORE = "Restore jobbench's worktrees"
SAVE = "Save jobbench's worktrees"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    yield from serve()


@pytest.fixture
def runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: FakeGitHub
) -> tuple[Runner, list[str]]:
    """A fresh runner whose workspace is a clone of three commits, a PR from the first to the
    last, and the action's plan step run on it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q")
    commits = []
    for n in range(3):
        (origin / "handler.py").write_text(f"VERSION = {n}\n")
        git(origin, "add", ".")
        git(origin, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", f"c{n}")
        commits.append(git(origin, "rev-parse", "HEAD"))
    run = Runner(tmp_path, github.url, pr_event(base=commits[0], head=commits[2]))
    clone(run)
    planned = run.run("Name the two commits")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    return run, commits


def clone(run: Runner) -> None:
    run.workspace.mkdir(parents=True, exist_ok=True)
    git(run.workspace, "clone", "-q", str(run.root / "origin"), ".")


def cached_paths(run: Runner, step_name: str) -> list[Path]:
    """The step's `path:` lines, as the plan's outputs fill them in."""
    lines = step(step_name, ACTION)["with"]["path"].strip().splitlines()
    plan = run.outputs["plan"]
    names = {"${{ steps.plan.outputs.cache-dir }}": "cache-dir"}
    names["${{ steps.plan.outputs.worktrees }}"] = "worktrees"
    return [Path(plan[names[line.strip()]]) for line in lines]


def save_and_start_afresh(run: Runner, paths: list[Path]) -> Path:
    """What actions/cache does between two runs: tar the paths, then a new machine (no HOME
    cache, no workspace) and a fresh clone."""
    archive = run.root / "cache.tar"
    with tarfile.open(archive, "w") as tar:
        for path in paths:
            tar.add(path, arcname=str(path.relative_to(run.root)))
    shutil.rmtree(run.workspace)
    shutil.rmtree(run.root / "home" / ".cache")
    clone(run)
    return archive


def restore(archive: Path, root: Path, paths: list[Path]) -> None:
    names = [str(path.relative_to(root)) for path in paths]
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if any(m.name.startswith(n) for n in names)]
        tar.extractall(root, members=members, filter="data")


def test_the_plan_names_the_jobbench_cache_and_the_clones_worktree_entries(
    runner: tuple[Runner, list[str]],
) -> None:
    run, _ = runner
    assert cached_paths(run, SAVE) == cached_paths(run, RESTORE)
    assert cached_paths(run, SAVE) == [
        run.root / "home" / ".cache" / "jobbench",
        run.workspace / ".git" / "worktrees",
    ]


def test_a_restored_cache_gives_worktrees_jobbench_reuses(
    runner: tuple[Runner, list[str]],
) -> None:
    run, commits = runner
    tree = worktree_for(run.workspace, commits[0])
    saved = cached_paths(run, SAVE)
    archive = save_and_start_afresh(run, saved)
    restore(archive, run.root, saved)
    assert worktree_for(run.workspace, commits[0]) == tree
    assert (tree / "handler.py").read_text() == "VERSION = 0\n"


def test_the_trees_alone_would_break_the_next_run(runner: tuple[Runner, list[str]]) -> None:
    """Why the clone's .git/worktrees is cached too."""
    run, commits = runner
    worktree_for(run.workspace, commits[0])
    saved = cached_paths(run, SAVE)
    archive = save_and_start_afresh(run, saved)
    restore(archive, run.root, [p for p in saved if ".git" not in p.parts])
    with pytest.raises(UsageError, match="is dirty or not at"):
        worktree_for(run.workspace, commits[0])


def test_the_prune_step_keeps_only_this_runs_two_commits(
    runner: tuple[Runner, list[str]],
) -> None:
    run, commits = runner
    trees = [worktree_for(run.workspace, commit) for commit in commits]
    pruned = run.run("Keep only these two commits")
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr
    assert "kept the worktrees of 2 commits, removed 1" in pruned.stdout
    assert [tree.exists() for tree in trees] == [True, False, True]
    listed = git(run.workspace, "worktree", "list", "--porcelain")
    assert commits[0] in listed and commits[2] in listed and commits[1] not in listed
    assert worktree_for(run.workspace, commits[1]) == trees[1]  # made again when needed
