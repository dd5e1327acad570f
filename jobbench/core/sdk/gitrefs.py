"""Git refs of an SDK checkout -> a clean worktree per commit in a cache folder."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from jobbench.errors import UsageError


def jobbench_cache() -> Path:
    """`$XDG_CACHE_HOME/jobbench` (default ~/.cache/jobbench): worktrees/ and envs/."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jobbench"


def cache_root() -> Path:
    return jobbench_cache() / "worktrees"


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"--repo {repo}: cannot run git ({exc})") from None


def resolve_commit(repo: Path, ref: str) -> str | None:
    """The commit `ref` names in `repo`, or None if it names none."""
    done = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def describe_checkout(tree: Path) -> str | None:
    """The checkout's tag or short commit (`v1.10.0`, `v1.10.0-3-gabc1234`); None unless it is
    the top of a git checkout or worktree (a folder inside another project is not)."""
    if not (tree / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(tree), "describe", "--tags", "--always"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    name = done.stdout.strip()
    return name if done.returncode == 0 and name else None


def is_git_repo(repo: Path) -> bool:
    return repo.is_dir() and git(repo, "rev-parse", "--git-dir").returncode == 0


def worktree_for(repo: Path, commit: str) -> Path:
    """A detached worktree of `commit`, made once and reused; a dirty one is an error."""
    repo_key = hashlib.sha1(str(repo.resolve()).encode()).hexdigest()[:12]
    path = cache_root() / repo_key / commit
    if path.exists():
        status = git(path, "status", "--porcelain", "--untracked-files=no")
        head = git(path, "rev-parse", "HEAD").stdout.strip()
        if status.returncode != 0 or status.stdout.strip() or head != commit:
            raise UsageError(
                f"worktree cache {path} is dirty or not at {commit[:12]}; remove "
                f"it (git -C {repo} worktree remove --force {path}) and re-run"
            )
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    added = git(repo, "worktree", "add", "--detach", str(path), commit)
    if added.returncode != 0:
        raise UsageError(f"--repo {repo}: git worktree add failed: {added.stderr.strip()}")
    return path
