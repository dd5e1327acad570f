"""A revision range of a git checkout -> its commits (core/sdk_history/commits.py): the first-parent
line from the start, tags, thinning, and a one-line error for each range that cannot be run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from jobbench.core.sdk_history.commits import (
    base_worker,
    commit_worker,
    commits_between,
    in_checkout,
    range_commits,
)
from jobbench.errors import UsageError


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def commit(repo: Path, name: str) -> str:
    (repo / "f.txt").write_text(name + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", name)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: c0 (v1.0) c1 c2 (annotated v1.1) M(merge of side: s1) c4 (v1.2); side: s1."""
    path = tmp_path / "sdk"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    commit(path, "c0")
    git(path, "tag", "v1.0")
    commit(path, "c1")
    commit(path, "c2")
    git(path, "tag", "-a", "v1.1", "-m", "release 1.1")
    git(path, "checkout", "-q", "-b", "side")
    (path / "side.txt").write_text("s\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "s1")
    git(path, "checkout", "-q", "main")
    git(path, "merge", "-q", "--no-ff", "-m", "M", "side")
    commit(path, "c4")
    git(path, "tag", "v1.2")
    return path


def subjects(commits: list) -> list[str]:  # type: ignore[type-arg]
    return [c.subject for c in commits]


def test_the_first_parent_line_from_the_start(repo: Path) -> None:
    found = range_commits(repo, "v1.0..main")
    assert subjects(found) == ["c0", "c1", "c2", "M", "c4"]  # the merged branch's s1 is not
    assert [c.ref for c in found] == ["v1.0", None, "v1.1", None, "v1.2"]
    assert subjects(range_commits(repo, "main")) == ["c0", "c1", "c2", "M", "c4"]


def test_tags_and_every(repo: Path) -> None:
    assert subjects(range_commits(repo, "v1.0..main", tags=True)) == ["c0", "c2", "c4"]
    assert subjects(range_commits(repo, "v1.0..main", every=3)) == ["c0", "M", "c4"]
    assert subjects(range_commits(repo, "HEAD~1..main", tags=True)) == ["M", "c4"]  # the start


@pytest.mark.parametrize(
    ("revrange", "said"),
    [
        ("v9..main", "no such commit"),
        ("..main", "write START..END"),
        ("side..main", "not on main's first-parent line"),
    ],
)
def test_a_range_that_cannot_be_run_is_one_line(repo: Path, revrange: str, said: str) -> None:
    with pytest.raises(UsageError, match=said):
        range_commits(repo, revrange)


def test_bisect_commits_and_its_errors(repo: Path) -> None:
    assert subjects(commits_between(repo, "v1.1", "main")) == ["c2", "M", "c4"]
    with pytest.raises(UsageError, match="one commit"):
        commits_between(repo, "main", "v1.2")
    with pytest.raises(UsageError, match="GOOD side: not on BAD main's first-parent line"):
        commits_between(repo, "side", "main")


def test_a_command_runs_from_each_commit_checkout(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    worker = base_worker("python f.txt --fast", 0, None)
    first = range_commits(repo, "v1.0..main")[0]
    spec = commit_worker(worker, repo, first)
    assert spec.sdk_path is not None and spec.sdk_path.name == first.sha
    assert spec.command == f"python {spec.sdk_path / 'f.txt'} --fast"
    assert in_checkout("python missing.py", spec.sdk_path) == "python missing.py"
    with pytest.raises(UsageError, match=r"missing\.py: not in commit"):
        commit_worker(base_worker("python missing.py", 0, None), repo, first)
    with pytest.raises(UsageError, match="--worker model: the model worker is jobbench's own"):
        base_worker("model", 0, None)
