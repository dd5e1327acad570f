"""A revision range of an SDK checkout -> its commits on the first-parent line, oldest first,
each with its subject and tag, and the worker that runs each commit's checkout.

`A..B` is A, then every commit after it on B's first-parent line up to B: the range's start is
its first point, the baseline every later commit is seen against. A lone ref `B` is B's whole
first-parent history. The first-parent line is what a main branch's merges made it; a merged
branch's own commits never ran as the branch's state, so they are not points of its history.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from jobbench.core.scenario.worker import WORKER_KINDS, check_command_files, worker_spec
from jobbench.core.sdk.gitrefs import git, is_git_repo, resolve_commit, worktree_for
from jobbench.errors import UsageError
from jobbench.results.trend import Commit
from jobbench.workers.spec import WorkerSpec


def check_repo(repo: Path | None) -> Path:
    if repo is None:
        raise UsageError("--repo: give the SDK checkout whose commits to run, e.g. --repo ../sdk")
    if not is_git_repo(repo):
        raise UsageError(f"--repo {repo}: not a git checkout; point it at a runpod-python clone")
    return repo


def commit_of(repo: Path, ref: str, what: str) -> str:
    """The commit `ref` names in `repo`; `what` says which argument it was."""
    sha = resolve_commit(repo, ref)
    if sha is None:
        raise UsageError(f"{what} {ref!r}: no such commit in {repo}; give a tag, branch or sha")
    return sha


def range_commits(repo: Path, revrange: str, *, tags: bool = False, every: int = 1) -> list[Commit]:
    """The range's commits, oldest first (its start first); `tags`: only the tagged ones (and
    the start); `every`: every Nth from the start, and the range's end."""
    if every < 1:
        raise UsageError(f"--every {every}: must be a whole number >= 1 (1: every commit)")
    start_ref, dots, end_ref = revrange.partition("..")
    if dots and (not start_ref or not end_ref or end_ref.startswith(".")):
        raise UsageError(f"REVRANGE {revrange!r}: write START..END, e.g. v1.6.0..main")
    end = commit_of(repo, end_ref if dots else start_ref, "REVRANGE")
    start = commit_of(repo, start_ref, "REVRANGE") if dots else None
    line = first_parent_line(repo, start, end)
    if start is not None:
        if start not in line:
            raise UsageError(
                f"REVRANGE {revrange!r}: {start_ref} is not on {end_ref}'s first-parent line; "
                "give a start that the end descends from by its first parents"
            )
        line = line[line.index(start) :]
    commits = describe(repo, line)
    return thinned(commits, tags=tags, every=every)


def first_parent_line(repo: Path, start: str | None, end: str) -> list[str]:
    """`end`'s first-parent history, oldest first, from `start` if given (up to its first
    parent's line: a start not on it is left out, which the caller names)."""
    args = ["rev-list", "--first-parent", "--reverse", end]
    if start is not None:
        args.append(f"^{start}^@")  # the start itself stays in; what came before it does not
    done = git(repo, *args)
    if done.returncode != 0:
        raise UsageError(f"--repo {repo}: git rev-list failed: {done.stderr.strip()}")
    return done.stdout.split()


def describe(repo: Path, shas: Sequence[str]) -> list[Commit]:
    """Each commit with its subject and tag (the newest-named tag when several)."""
    if not shas:
        return []
    tags = _tags(repo)
    shown = git(repo, "show", "-s", "--format=%H%x00%s", *shas)
    if shown.returncode != 0:
        raise UsageError(f"--repo {repo}: git show failed: {shown.stderr.strip()}")
    subjects = dict(line.split("\0", 1) for line in shown.stdout.splitlines() if "\0" in line)
    return [Commit(sha, subjects.get(sha, ""), tags.get(sha)) for sha in shas]


def _tags(repo: Path) -> dict[str, str]:
    listed = git(
        repo,
        "for-each-ref",
        "--sort=creatordate",
        "--format=%(objectname) %(*objectname) %(refname:short)",
        "refs/tags",
    )
    found: dict[str, str] = {}
    for line in listed.stdout.splitlines():
        words = line.split()
        if len(words) == 3:  # an annotated tag: its commit is the peeled object
            found[words[1]] = words[2]
        elif len(words) == 2:
            found[words[0]] = words[1]
    return found


def thinned(commits: list[Commit], *, tags: bool, every: int) -> list[Commit]:
    if tags:
        commits = [c for i, c in enumerate(commits) if i == 0 or c.ref is not None]
    if every > 1 and commits:
        kept = commits[::every]
        if kept[-1] != commits[-1]:
            kept.append(commits[-1])
        commits = kept
    return commits


def commits_between(repo: Path, good: str, bad: str) -> list[Commit]:
    """GOOD, then every commit after it on BAD's first-parent line up to BAD."""
    good_sha, bad_sha = commit_of(repo, good, "GOOD"), commit_of(repo, bad, "BAD")
    if good_sha == bad_sha:
        raise UsageError(f"GOOD {good} and BAD {bad} are one commit; give BAD a later one")
    line = first_parent_line(repo, good_sha, bad_sha)
    if not line or line[0] != good_sha:
        raise UsageError(
            f"GOOD {good}: not on BAD {bad}'s first-parent line; give a GOOD that BAD descends "
            "from by its first parents"
        )
    return describe(repo, line)


def base_worker(worker: str, take_ahead: int, python: str | None) -> WorkerSpec:
    """`--worker runpod` (the SDK of each commit) or a command run from each commit's checkout;
    the model worker is refused: it is jobbench's own, the same at every commit. A command's
    files are looked for in each commit's checkout as it runs (commit_worker)."""
    if worker in WORKER_KINDS:
        spec = worker_spec(worker, None, take_ahead, None, python)
        if spec.kind == "model":
            raise UsageError(
                "--worker model: the model worker is jobbench's own, the same at every commit "
                "of --repo; use runpod (the SDK of each commit) or a command from the checkout"
            )
        return spec
    if not worker.strip():
        raise UsageError("--worker: the command is empty; give e.g. --worker 'python worker.py'")
    if take_ahead:
        raise UsageError(
            "--take-ahead: a user command takes ahead only by its own code, which jobbench "
            "does not set; drop --take-ahead or use --worker runpod"
        )
    return WorkerSpec(kind="command", command=worker)


def commit_worker(spec: WorkerSpec, repo: Path, commit: Commit) -> WorkerSpec:
    """The worker of `spec` running `commit`'s checkout (a worktree made once, then reused):
    the runpod SDK from it, or a command whose words that name a file of the checkout name that
    file in the worktree (`python worker.py` runs the commit's worker.py). The checkout is first
    on the workers' PYTHONPATH either way. A commit whose checkout lacks the command's script
    cannot run: a UsageError naming it."""
    tree = worktree_for(repo, commit.sha)
    if spec.kind != "command":
        named = f"commit {commit.name} ({commit.short})" if commit.ref else f"commit {commit.short}"
        return replace(spec, sdk_path=tree, sdk_name=named)
    command = in_checkout(spec.command or "", tree)
    script = next((w for w in shlex.split(command)[1:] if not w.startswith("-")), None)
    missing = script is not None and script.endswith(".py") and not Path(script).is_file()
    if missing:  # neither in the checkout (then it is a path there now) nor here
        raise UsageError(f"--worker {spec.command!r}: {script}: not in commit {commit.short}")
    check_command_files(command)
    return replace(spec, sdk_path=tree, command=command)


def in_checkout(command: str, tree: Path) -> str:
    """`command` with each word that names a file or folder of `tree` as its path there."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"--worker {command!r}: cannot split it ({exc})") from None
    out = words[:1]
    for word in words[1:]:
        inside = not word.startswith("-") and (tree / word).exists()
        out.append(str(tree / word) if inside else word)
    return shlex.join(out)
