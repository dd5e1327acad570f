"""The CI example's cache of jobbench's worktrees: what it saves, restored into a fresh clone of
the next run, gives worktrees jobbench reuses; and the prune step keeps only the two commits of
this run. Real git, jobbench's own worktree code, the steps' own paths and script."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from jobbench.core.sdk.gitrefs import worktree_for
from jobbench.errors import UsageError
from tests.integration.workflow import run_step, step


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[str]]:
    """(HOME, the workspace with its `sdk` clone, three commits) as on a fresh runner."""
    home, workspace, origin = tmp_path / "home", tmp_path / "work", tmp_path / "origin"
    for folder in (home, workspace, origin):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    git(origin, "init", "-q")
    commits = []
    for n in range(3):
        (origin / "handler.py").write_text(f"VERSION = {n}\n")
        git(origin, "add", ".")
        git(origin, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", f"c{n}")
        commits.append(git(origin, "rev-parse", "HEAD"))
    clone(origin, workspace)
    return home, workspace, commits


def clone(origin: Path, workspace: Path) -> None:
    git(workspace, "clone", "-q", str(origin), "sdk")


def cached_paths(home: Path, workspace: Path, step_name: str) -> list[Path]:
    lines = step(step_name)["with"]["path"].split()
    return [home / line[2:] if line.startswith("~/") else workspace / line for line in lines]


def save_and_start_afresh(root: Path, paths: list[Path]) -> Path:
    """What actions/cache does between two runs: tar the paths, then a new machine (no HOME
    cache, no workspace) and a fresh clone."""
    archive = root / "cache.tar"
    with tarfile.open(archive, "w") as tar:
        for path in paths:
            tar.add(path, arcname=str(path.relative_to(root)))
    shutil.rmtree(root / "work" / "sdk")
    shutil.rmtree(root / "home" / ".cache")
    clone(root / "origin", root / "work")
    return archive


def restore(archive: Path, root: Path, paths: list[Path]) -> None:
    names = [str(path.relative_to(root)) for path in paths]
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if any(m.name.startswith(n) for n in names)]
        tar.extractall(root, members=members, filter="data")


def test_a_restored_cache_gives_worktrees_jobbench_reuses(
    runner: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    home, workspace, commits = runner
    sdk = workspace / "sdk"
    tree = worktree_for(sdk, commits[0])
    saved = cached_paths(home, workspace, "Save jobbench's worktrees")
    assert saved == cached_paths(home, workspace, "Restore jobbench's worktrees")
    archive = save_and_start_afresh(tmp_path, saved)
    restore(archive, tmp_path, saved)
    assert worktree_for(sdk, commits[0]) == tree
    assert (tree / "handler.py").read_text() == "VERSION = 0\n"


def test_the_trees_alone_would_break_the_next_run(
    runner: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    """Why the clone's sdk/.git/worktrees is cached too."""
    home, workspace, commits = runner
    sdk = workspace / "sdk"
    worktree_for(sdk, commits[0])
    saved = cached_paths(home, workspace, "Save jobbench's worktrees")
    archive = save_and_start_afresh(tmp_path, saved)
    restore(archive, tmp_path, [p for p in saved if ".git" not in p.parts])
    with pytest.raises(UsageError, match="is dirty or not at"):
        worktree_for(sdk, commits[0])


def test_the_prune_step_keeps_only_this_runs_two_commits(
    runner: tuple[Path, Path, list[str]],
) -> None:
    home, workspace, commits = runner
    sdk = workspace / "sdk"
    trees = [worktree_for(sdk, commit) for commit in commits]
    keep = f"{commits[0]} {commits[2]}"
    pruned = run_step("Keep only these two commits", workspace, {"HOME": str(home), "KEEP": keep})
    assert pruned.returncode == 0, pruned.stderr
    assert [tree.exists() for tree in trees] == [True, False, True]
    listed = git(sdk, "worktree", "list", "--porcelain")
    assert commits[0] in listed and commits[2] in listed and commits[1] not in listed
    assert worktree_for(sdk, commits[1]) == trees[1]  # made again when a later run needs it
