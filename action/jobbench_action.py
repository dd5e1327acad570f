"""The steps of the jobbench GitHub Actions (action.yml, setup/ and comment/), one mode each:

    install jobbench from this action's own ref into a venv of its own, on PATH
    plan    the two commits (by default the PR's merge base and head), their names, cache keys
    gate    `jobbench gate` on them; keeps its exit code for the report
    prune   keep only these two commits' worktrees in the cache
    report  the check's outcome, the accept label, the job summary, outputs, the sticky comment
    post    (a workflow_run workflow) post the comment a fork's run left as an artifact

Each reads its inputs from its step's env (`INPUT_<NAME>`) and the runner's variables, so the
tests run it with a fake runner: an event file, output and summary files, and a loopback server
as GITHUB_API_URL. Standard library only."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import fork_comment
import gate_call
import pr_event
import runner_env
import worktree_cache
from gate_verdict import comment_body, decide
from github_rest import ApiError, GitHubApi
from runner_env import ActionError, annotate, env, set_output, step_input
from sticky_comment import marker, marker_of, post_or_update, with_marker

ACTION_PATH = Path(__file__).resolve().parents[1]


def work_dir() -> Path:
    """Where the steps leave files for each other: the runner's temp folder, emptied after
    the job."""
    return Path(env("RUNNER_TEMP") or tempfile.gettempdir()) / "jobbench-action"


def gate_markdown() -> Path:
    return work_dir() / "gate.md"


def comment_dir() -> Path:
    return work_dir() / "comment"


def sdk_path() -> Path:
    return Path(step_input("sdk-path", "."))


def api() -> GitHubApi:
    return GitHubApi(runner_env.api_url(), step_input("github-token"), runner_env.repository())


def install() -> int:
    """jobbench from the action's own checkout (the ref in `uses: OWNER/jobbench@REF`), never
    from an address a workflow names, into a venv of its own: its dependencies never meet the
    SDK's, whose every commit gets an environment jobbench builds."""
    extras = step_input("extras")
    if extras and not re.fullmatch(r"[a-z][a-z0-9-]*(,[a-z][a-z0-9-]*)*", extras):
        raise ActionError(f"input extras: {extras!r} is not a list of extras; e.g. history,locust")
    venv = work_dir() / "venv"
    target = f"{ACTION_PATH}[{extras}]" if extras else str(ACTION_PATH)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", target]
    steps = {
        f"python -m venv {venv}": [sys.executable, "-m", "venv", str(venv)],
        f"pip install {target}": pip,
    }
    for said, command in steps.items():
        if subprocess.run(command, check=False).returncode != 0:
            annotate("error", "jobbench action install", f"{said} failed (above)")
            return 1
    runner_env.add_path(venv / "bin")
    print(f"installed {target} into {venv}")
    return 0


def plan() -> int:
    sdk = sdk_path()
    if not (sdk / ".git").exists():
        raise ActionError(
            f"input sdk-path: {sdk} is not a git checkout; check out the SDK there "
            "(actions/checkout with fetch-depth: 0)"
        )
    # A verdict another call left in this job (the action used twice) is never this call's.
    gate_markdown().unlink(missing_ok=True)
    pr = pr_event.from_event(runner_env.event())
    base_in, head_in = step_input("base"), step_input("head")
    if pr is None and not (base_in and head_in):
        kind = env("GITHUB_EVENT_NAME", "this")
        raise ActionError(
            f"inputs base and head: a {kind} event has no pull request to take them from; give both"
        )
    named = pr_event.commit_of(sdk, base_in, "input base") if base_in else None
    if head_in or pr is None:
        head = pr_event.commit_of(sdk, head_in, "input head")
    else:
        head = pr_event.commit_of(sdk, pr.head_sha, "the PR's head commit")
    if named is not None:
        base = named
        base_name = f"base {base[:7]} ({base_in})" if base_in != base else f"base {base[:7]}"
    elif pr is not None:
        base = pr_event.merge_base(sdk, pr.base_sha, head)
        base_name = f"base {base[:7]} (merge base with {pr.base_ref or 'the base branch'})"
    else:  # ruled out above: without a pull request both inputs are given
        raise ActionError("input base: give it")
    head_name = f"head {head[:7]}" + (f" (#{pr.number})" if pr is not None else "")
    runner_os = env("RUNNER_OS", "Linux")
    key, fallbacks = worktree_cache.worktree_keys(runner_os, base, head)
    common = Path(pr_event.git(sdk, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    outputs = {
        "base": base,
        "head": head,
        "base-name": base_name,
        "head-name": head_name,
        "pr-number": str(pr.number) if pr is not None else "",
        "cache-dir": str(worktree_cache.jobbench_cache()),
        "worktrees": str(common / "worktrees"),
        "cache-key": key,
        "restore-keys": "\n".join(fallbacks),
        "pip-cache": str(worktree_cache.pip_cache()),
        "pip-key": worktree_cache.pip_key(runner_os, ACTION_PATH),
    }
    for name, value in outputs.items():
        set_output(name, value)
    print(f"A = {base_name}\nB = {head_name}")
    return 0


def gate() -> int:
    base = runner_env.required_env("BASE_COMMIT", "the plan step gives it")
    head = runner_env.required_env("HEAD_COMMIT", "the plan step gives it")
    call = gate_call.GateCall(
        sdk=sdk_path(),
        base=base,
        head=head,
        base_name=env("BASE_NAME", base[:12]),
        head_name=env("HEAD_NAME", head[:12]),
        suite=step_input("suite", "gate"),
        budget=step_input("budget", "20m"),
        max_regression=step_input("max-regression", "5%"),
        lanes=step_input("lanes", "auto"),
        out=Path(step_input("out", "reports")),
        markdown=gate_markdown(),
    )
    gate_markdown().parent.mkdir(parents=True, exist_ok=True)
    code = gate_call.run(call)
    set_output("exit-code", str(code))
    return 0


def prune() -> int:
    keep = set(env("KEEP").split())
    removed = worktree_cache.keep_only(sdk_path(), keep)
    print(f"kept the worktrees of {len(keep)} commits, removed {len(removed)}")
    return 0


def report() -> int:
    commenting = runner_env.flag_input("comment", True)
    pr = pr_event.from_event(runner_env.event())
    accept_label = step_input("accept-label")
    labels, said = (pr.labels, None) if pr is not None else ([], None)
    if pr is not None and step_input("github-token"):
        labels, said = pr_event.current_labels(api(), pr)
    if said:
        print(said)
    decision = decide(env("GATE_EXIT").strip(), accept_label, labels)
    markdown = gate_markdown().read_text() if gate_markdown().exists() else None
    suite = step_input("suite", "gate")
    body = comment_body(decision, markdown, accept_label, runner_env.run_url(), suite)
    marked = with_marker(body, marker(suite))
    fork_comment.write(comment_dir(), pr.number if pr is not None else None, marked)
    runner_env.append_summary(body)
    set_output("verdict", decision.verdict)
    set_output("accepted", "true" if decision.accepted else "false")
    set_output("comment-file", str(comment_dir() / fork_comment.COMMENT))
    set_output("comment-dir", str(comment_dir()))
    if pr is not None and commenting:
        comment_on(pr, marked)
    if decision.level is not None:
        annotate(decision.level, decision.title, decision.message)
    return decision.exit_code


def comment_on(pr: pr_event.PullRequest, body: str) -> None:
    """Post or update the sticky comment. A comment that cannot be posted never changes the
    check, which is the gate's alone."""
    if pr.fork:
        annotate(
            "notice",
            "perf gate comment",
            "a fork's pull request gets a read-only token: the comment is in the comment-dir "
            "output, for a workflow_run workflow to post (docs/ci.md, fork pull requests)",
        )
        return
    try:
        print(f"PR #{pr.number}: {post_or_update(api(), pr.number, body)}")
    except ApiError as err:
        annotate("warning", "perf gate comment", f"not posted: {err}")


def post() -> int:
    """Post what a fork's run left: runs in a workflow_run workflow, never the fork's code."""
    finished = runner_env.event().get("workflow_run")
    if not isinstance(finished, dict) or not finished.get("head_sha"):
        raise ActionError(
            "event: no workflow_run in it; run the comment action from a workflow triggered "
            "on workflow_run of the gate's workflow"
        )
    artifact = fork_comment.read(Path(step_input("artifact", "perf-comment")))
    github = api()
    try:
        pr = github.call("GET", f"/pulls/{artifact.number}")
    except ApiError as err:
        if err.status == 404:
            raise ActionError(
                f"artifact: pull request #{artifact.number} is not in "
                f"{runner_env.repository()}; the artifact must come from that PR's run"
            ) from err
        raise
    ran, now = str(finished["head_sha"]), str(((pr or {}).get("head") or {}).get("sha"))
    if ran != now:
        annotate(
            "notice",
            "perf gate comment",
            f"not posted: PR #{artifact.number}'s head is {now[:12]}, the finished run's "
            f"{ran[:12]} (a newer push's run comments, or the artifact names another PR)",
        )
        return 0
    body = with_marker(artifact.body, marker_of(artifact.body))
    done = post_or_update(github, artifact.number, body)
    print(f"PR #{artifact.number}: {done}")
    return 0


MODES: dict[str, Callable[[], int]] = {
    "install": install,
    "plan": plan,
    "gate": gate,
    "prune": prune,
    "report": report,
    "post": post,
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("mode", choices=sorted(MODES))
    mode = parser.parse_args(argv).mode
    try:
        return MODES[mode]()
    except ActionError as err:
        annotate("error", f"jobbench action {mode}", str(err))
        return 2
    except ApiError as err:
        annotate("error", f"jobbench action {mode}", str(err))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
