"""The pull request a run is for, from the event that started it: its number, the two commits,
its labels and whether it comes from a fork (whose token cannot comment)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from github_rest import ApiError, GitHubApi
from runner_env import ActionError


@dataclass(frozen=True)
class PullRequest:
    number: int
    base_sha: str
    head_sha: str
    base_ref: str
    fork: bool
    labels: list[str] = field(default_factory=list)


def from_event(payload: dict[str, Any]) -> PullRequest | None:
    """The event's pull request, or None for an event without one (a push, a dispatch)."""
    pr = payload.get("pull_request")
    if not isinstance(pr, dict):
        return None
    base, head = pr.get("base") or {}, pr.get("head") or {}
    base_repo = (base.get("repo") or {}).get("full_name")
    head_repo = (head.get("repo") or {}).get("full_name")
    return PullRequest(
        number=int(pr.get("number") or payload.get("number") or 0),
        base_sha=str(base.get("sha") or ""),
        head_sha=str(head.get("sha") or ""),
        base_ref=str(base.get("ref") or ""),
        # A deleted fork has no repo: it is still not this repository.
        fork=head_repo != base_repo,
        labels=[str(label.get("name")) for label in pr.get("labels") or []],
    )


def current_labels(api: GitHubApi, pr: PullRequest) -> tuple[list[str], str | None]:
    """The labels the PR carries now, so a label added after the event counts on a re-run
    (a re-run replays the event as it was); the event's, and why, when the API cannot say."""
    try:
        found = list(api.pages(f"/issues/{pr.number}/labels"))
    except ApiError as err:
        return pr.labels, f"the PR's labels as the event gave them: {err}"
    return [str(label.get("name")) for label in found if isinstance(label, dict)], None


def git(sdk: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(sdk), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        raise ActionError(f"git {' '.join(args)} in {sdk}: {said[-1] if said else 'failed'}")
    return done.stdout.strip()


def commit_of(sdk: Path, ref: str, what: str) -> str:
    """The full sha `ref` names in the SDK checkout; a one-line error naming `what` gave it
    (`input base`) else."""
    done = subprocess.run(
        ["git", "-C", str(sdk), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ActionError(
            f"{what}: {ref!r} is no commit of {sdk}; check out the SDK with its history "
            "(actions/checkout with fetch-depth: 0) or name a commit it has"
        )
    return done.stdout.strip()


def merge_base(sdk: Path, base_sha: str, head_sha: str) -> str:
    """The commit the PR branched from: only the PR's own changes count, where the base
    branch's tip would put on it everything merged since."""
    for sha, what in ((base_sha, "the PR's base commit"), (head_sha, "the PR's head commit")):
        commit_of(sdk, sha, what)
    return git(sdk, "merge-base", base_sha, head_sha)
