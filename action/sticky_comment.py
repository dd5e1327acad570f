"""One comment per pull request and suite, found again by a hidden marker and edited, so the PR
shows one verdict per suite, always the newest, however many runs it had."""

from __future__ import annotations

import re
from typing import Any

from github_rest import GitHubApi

MARKER = "<!-- jobbench-perf-gate -->"  # the default suite's; another suite's names it
ANY_MARKER = re.compile(r"<!-- jobbench-perf-gate(?: suite=[A-Za-z0-9._-]+)? -->")


def marker(suite: str) -> str:
    """The marker of `suite`'s comment: a PR gated on two suites gets two comments."""
    if suite in ("", "gate"):
        return MARKER
    return f"<!-- jobbench-perf-gate suite={re.sub(r'[^A-Za-z0-9._-]', '-', suite)} -->"


def marker_of(body: str) -> str:
    """The marker a body (a fork's run's) opens with, if it is one; the default's else."""
    first = body.split("\n", 1)[0].strip()
    return first if ANY_MARKER.fullmatch(first) else MARKER


def with_marker(body: str, mark: str = MARKER) -> str:
    """`body` under `mark`. Any marker inside it is taken out first: the body may come from an
    untrusted run (a fork's), and only the comment this action posts may carry one."""
    return f"{mark}\n{ANY_MARKER.sub('', body).strip()}\n"


def previous(comments: list[dict[str, Any]], mark: str = MARKER) -> dict[str, Any] | None:
    """The bot's comment with this marker, the newest if there are several. A person's comment
    that quotes the marker is never one: the action could not edit it anyway."""
    found = None
    for comment in comments:
        user = comment.get("user") or {}
        if user.get("type") == "Bot" and mark in (comment.get("body") or ""):
            found = comment
    return found


def post_or_update(api: GitHubApi, number: int, body: str) -> str:
    """Post `body` (already marked) on PR `number`, or edit the earlier comment with its
    marker; says which, with the comment's address."""
    comments = list(api.pages(f"/issues/{number}/comments"))
    earlier = previous(comments, marker_of(body))
    if earlier is None:
        made = api.call("POST", f"/issues/{number}/comments", {"body": body})
        return f"posted {_where(made)}"
    edited = api.call("PATCH", f"/issues/comments/{earlier['id']}", {"body": body})
    return f"updated {_where(edited)}"


def _where(comment: Any) -> str:
    if isinstance(comment, dict) and comment.get("html_url"):
        return str(comment["html_url"])
    return "the comment"
