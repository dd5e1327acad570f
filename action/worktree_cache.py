"""What the action caches between runs, under which keys, and what it keeps.

jobbench keeps a worktree per commit and an environment per dependency set under
$XDG_CACHE_HOME/jobbench (default ~/.cache/jobbench). A worktree has a second half in the
clone, its entry in .git/worktrees: a restored tree without it is no worktree there, so both are
cached together. pip's cache is keyed by the action's own pyproject.toml: a new jobbench
release starts a new one."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
from pathlib import Path

KEY_VERSION = "v1"  # bump to start every cache afresh


def jobbench_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jobbench"


def pip_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pip"


def worktree_keys(runner_os: str, base: str, head: str) -> tuple[str, list[str]]:
    """The key this run saves under, and the keys to fall back on, nearest first: the same
    base (its tree and environments), then any. The environments are built for this exact
    Python, so its version is in every key."""
    prefix = f"jobbench-{KEY_VERSION}-{runner_os}-py{platform.python_version()}-"
    return f"{prefix}{base}-{head}", [f"{prefix}{base}-", prefix]


def pip_key(runner_os: str, action_path: Path) -> str:
    pyproject = action_path / "pyproject.toml"
    digest = hashlib.sha256(pyproject.read_bytes()).hexdigest()[:16] if pyproject.exists() else ""
    return f"jobbench-pip-{KEY_VERSION}-{runner_os}-py{platform.python_version()}-{digest}"


def keep_only(sdk: Path, keep: set[str]) -> list[Path]:
    """Remove the cached worktrees of every commit but `keep`, and their entries in the
    clone, so the cache does not grow with every push; environments stay (a new one is one
    new dependency set). The removed trees, for the log."""
    removed = []
    for tree in sorted((jobbench_cache() / "worktrees").glob("*/*/")):
        if tree.is_dir() and tree.name not in keep:
            shutil.rmtree(tree)
            removed.append(tree)
    subprocess.run(["git", "-C", str(sdk), "worktree", "prune"], check=False)
    return removed
