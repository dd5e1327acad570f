"""The CI example's PR comment step: its `actions/github-script` script, run by node as the action
runs it, against a recording stand-in for the GitHub API: one sticky comment, found again by its
hidden marker, whatever the gate's exit."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.workflow import step
from tests.programs import NODE, needs

pytestmark = needs(NODE)

MARKER = "<!-- jobbench-perf-gate -->"

# github-script runs `script` as the body of an async function of (require, github, context,
# core, ...); `github.paginate` returns every comment of the PR.
HARNESS = """
const fs = require("fs");
const [scriptFile, commentsFile] = process.argv.slice(2);
const comments = JSON.parse(fs.readFileSync(commentsFile, "utf8"));
const calls = [];
const github = {
  paginate: async (route, params) => { calls.push({ call: route, ...params }); return comments; },
  rest: { issues: {
    listComments: "listComments",
    createComment: async (params) => { calls.push({ call: "createComment", ...params }); },
    updateComment: async (params) => { calls.push({ call: "updateComment", ...params }); },
  } },
};
const context = {
  repo: { owner: "runpod", repo: "runpod-python" },
  serverUrl: "https://github.com",
  runId: 77,
  issue: { number: 42 },
};
const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
const script = fs.readFileSync(scriptFile, "utf8");
const run = new AsyncFunction("require", "github", "context", "core", script);
run(require, github, context, {}).then(() => console.log(JSON.stringify(calls)));
"""


def post(
    tmp_path: Path, comments: list[dict[str, Any]], gate_exit: str, markdown: str | None
) -> list[dict[str, Any]]:
    """The API calls the step's script makes, run in a workspace with or without the gate's
    Markdown, `GATE_EXIT` as the step's env gives it."""
    comment_step = step("Post or update the PR comment")
    assert comment_step["uses"].startswith("actions/github-script@")
    (tmp_path / "script.js").write_text(comment_step["with"]["script"])
    (tmp_path / "harness.cjs").write_text(HARNESS)
    (tmp_path / "comments.json").write_text(json.dumps(comments))
    if markdown is not None:
        (tmp_path / "perf-comment.md").write_text(markdown)
    done = subprocess.run(
        ["node", "harness.cjs", "script.js", "comments.json"],
        cwd=tmp_path,
        env={**os.environ, "GATE_EXIT": gate_exit},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    calls: list[dict[str, Any]] = json.loads(done.stdout)
    assert calls[0] == {
        "call": "listComments",
        "owner": "runpod",
        "repo": "runpod-python",
        "issue_number": 42,
        "per_page": 100,
    }
    return calls[1:]


VERDICT = "## jobbench gate: regression\n\n| scenario | change |\n|---|---|\n| 1w | +64% |\n"
BOT = {"type": "Bot", "login": "github-actions[bot]"}
HUMAN = {"type": "User", "login": "reviewer"}


def test_the_first_run_creates_the_comment_with_the_marker_and_the_verdict(tmp_path: Path) -> None:
    (created,) = post(tmp_path, [{"id": 1, "user": HUMAN, "body": "LGTM"}], "1", VERDICT)
    assert created["call"] == "createComment" and created["issue_number"] == 42
    body = created["body"]
    assert body.startswith(MARKER + "\n") and VERDICT.strip() in body
    assert "https://github.com/runpod/runpod-python/actions/runs/77" in body


def test_a_later_run_updates_the_bots_marked_comment_only(tmp_path: Path) -> None:
    comments = [
        {"id": 1, "user": HUMAN, "body": f"quoting the bot: {MARKER} old verdict"},
        {"id": 2, "user": BOT, "body": "another bot's comment"},
        {"id": 3, "user": BOT, "body": f"{MARKER}\nold verdict"},
    ]
    (updated,) = post(tmp_path, comments, "0", VERDICT)
    assert updated["call"] == "updateComment" and updated["comment_id"] == 3
    assert VERDICT.strip() in updated["body"] and "old verdict" not in updated["body"]


@pytest.mark.parametrize(
    ("gate_exit", "says"),
    [("4", "`jobbench gate` exited 4"), ("", "an earlier step failed")],
    ids=["the gate failed", "the gate did not run"],
)
def test_without_a_verdict_the_comment_says_why(tmp_path: Path, gate_exit: str, says: str) -> None:
    (created,) = post(tmp_path, [], gate_exit, None)
    assert "no verdict" in created["body"] and says in created["body"]


def test_an_inconclusive_verdict_says_the_check_still_passes(tmp_path: Path) -> None:
    (created,) = post(tmp_path, [], "3", "## jobbench gate: inconclusive\n")
    assert "Inconclusive is a warning: the check passes." in created["body"]
    (passed,) = post(tmp_path, [], "0", "## jobbench gate: pass\n")
    assert "Inconclusive" not in passed["body"]
