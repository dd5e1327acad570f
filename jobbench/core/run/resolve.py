"""A name on the command line -> a side of a comparison: a saved result or a variant to run.

Tried in order: a result file path, a saved label (reports/NAME.json), a variant (config or
built-in), a git ref of --repo (an SDK checkout: the variant runs the real SDK from a worktree).
`LABEL~N` is always a saved result: the run N before LABEL's current one (results/history.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from jobbench.core.scenario.project import Project, Variant
from jobbench.core.sdk.gitrefs import is_git_repo, resolve_commit, worktree_for
from jobbench.errors import UsageError
from jobbench.results.history import parse_ref
from jobbench.results.model import Result
from jobbench.results.store import find_result, read_result, safe_label
from jobbench.workers.spec import WorkerSpec


@dataclass(frozen=True)
class ResolvedSide:
    """A name on the command line once resolved: a saved result (`doc`) or a variant to run."""

    name: str
    doc: Result | None = None  # a saved result
    path: Path | None = None
    variant: Variant | None = None  # or something to run now
    origin: str = ""
    label: str = ""  # the saved label a run of this side goes to


def resolve(
    name: str, project: Project, out: Path, repo: Path | None, rerun: bool, label: str = ""
) -> ResolvedSide:
    """`label`: the saved label of this side when not the name's own (`compare main main`
    keeps B's run apart); it is looked up here and a run of the side is saved under it."""
    if parse_ref(name) is not None and not Path(name).is_file():
        return _saved(name, find_result(name, out))  # history is never run again
    label = label or safe_label(name)
    tried = []
    explicit = name.endswith(".json") or Path(name).is_file()
    path = find_result(name if explicit else label, out)
    tried.append(f"{'file' if explicit else 'saved label'} {path}")
    if path.is_file() and (explicit or not rerun):
        return _saved(name, path)
    tried.append("variants " + ", ".join(sorted(project.variants)))
    if name in project.variants:
        variant = project.variants[name]
        origin = f"variant {name}: {variant.describe()}"
        return ResolvedSide(name, variant=variant, origin=origin, label=label)
    if repo is not None:
        tried.append(f"git ref of {repo}")
        side = _git_side(name, repo)
        if side is not None:
            return replace(side, label=label)
    else:
        tried.append("git ref (no --repo given)")
    raise UsageError(
        f"{name!r} is not a result, a saved label, a variant or a git ref; tried "
        + "; ".join(tried)
    )


def _saved(name: str, path: Path) -> ResolvedSide:
    doc = read_result(path)
    age = time.time() - path.stat().st_mtime
    state = "" if doc.complete else ", INCOMPLETE"
    return ResolvedSide(
        name,
        doc=doc,
        path=path,
        origin=f"result {path} ({_age(age)} old, created {doc.created}{state})",
    )


def _git_side(name: str, repo: Path) -> ResolvedSide | None:
    if not is_git_repo(repo):
        raise UsageError(f"--repo {repo}: not a git checkout; point it at a runpod-python clone")
    commit = resolve_commit(repo, name)
    if commit is None:
        return None
    tree = worktree_for(repo, commit)
    worker = WorkerSpec(kind="runpod", sdk_path=tree, sdk_name=f"git ref {name} ({commit[:12]})")
    variant = Variant(name, worker)
    return ResolvedSide(
        name,
        variant=variant,
        origin=f"git ref {name} of {repo} = commit {commit[:12]} (worktree {tree})",
    )


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"
