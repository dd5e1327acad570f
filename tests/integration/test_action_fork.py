"""The comment action (comment/action.yml), the workflow_run half of the fork pattern, run as the
runner runs it against a stand-in GitHub API: it posts what a fork's run left in its artifact,
read as untrusted input, and only on the pull request whose head that run benchmarked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.fake_github import (
    BOT,
    FakeGitHub,
    Runner,
    annotations,
    pr_event,
    serve,
)
from tests.integration.workflow import COMMENT_ACTION

MARKER = "<!-- jobbench-perf-gate -->"
HEAD = "2" * 40
STEP = "Post or update the PR comment"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    for state in serve():
        state.heads[42] = HEAD
        yield state


def finished_run(tmp_path: Path, github: FakeGitHub, head: str = HEAD) -> Runner:
    """The runner of the workflow_run workflow: its event names the gate's finished run."""
    event = {"workflow_run": {"id": 9, "event": "pull_request", "head_sha": head}}
    return Runner(tmp_path, github.url, event)


def artifact(tmp_path: Path, number: str | bytes, body: str | bytes) -> Path:
    folder = tmp_path / "perf-comment"
    folder.mkdir()
    for name, content in (("pr-number", number), ("comment.md", body)):
        data = content.encode() if isinstance(content, str) else content
        (folder / name).write_bytes(data)
    return folder


def post(run: Runner, folder: Path) -> tuple[int, list[str]]:
    done = run.run(STEP, {"artifact": str(folder)}, action=COMMENT_ACTION)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, annotations(done.stdout)


def test_a_fork_runs_comment_reaches_its_pr(tmp_path: Path, github: FakeGitHub) -> None:
    """The two halves: the gate's report step on the fork's PR writes the artifact; the comment
    action posts it as written."""
    fork = Runner(tmp_path / "fork-run", github.url, pr_event(fork=True, head=HEAD))
    (fork.temp / "jobbench-action").mkdir(parents=True)
    (fork.temp / "jobbench-action" / "gate.md").write_text("### ✅ pass: no row is slower\n")
    fork.outputs["gate"] = {"exit-code": "0"}
    assert fork.run("Decide the check", {"comment": "false"}).returncode == 0
    assert github.calls("POST") == []  # the fork's run posts nothing
    folder = Path(fork.outputs["report"]["comment-dir"])
    code, said = post(finished_run(tmp_path, github), folder)
    assert (code, said) == (0, [])
    (posted,) = github.calls("POST")
    assert posted.path == "/repos/runpod/runpod-python/issues/42/comments"
    assert posted.body["body"] == (folder / "comment.md").read_text()
    assert "### ✅ pass: no row is slower" in posted.body["body"]


def test_a_later_run_edits_the_same_comment(tmp_path: Path, github: FakeGitHub) -> None:
    ours = github.add_comment(42, BOT, f"{MARKER}\nold verdict")
    code, _ = post(finished_run(tmp_path, github), artifact(tmp_path, "42\n", "new verdict"))
    assert code == 0 and github.calls("POST") == []
    (edited,) = github.calls("PATCH")
    assert edited.path.endswith(f"/issues/comments/{ours}")
    assert edited.body["body"] == f"{MARKER}\nnew verdict\n"


@pytest.mark.parametrize(
    "number",
    ["42; echo hi", "0", "-42", "4e2", "", "42 43", "\uff14\uff12", "9" * 11, b"\xff\xfe42"],
    ids=["shell", "zero", "negative", "exponent", "empty", "two", "wide digits", "long", "bytes"],
)
def test_a_pr_number_that_is_no_plain_number_is_refused(
    tmp_path: Path, github: FakeGitHub, number: str | bytes
) -> None:
    code, said = post(finished_run(tmp_path, github), artifact(tmp_path, number, "verdict"))
    assert code == 2
    assert said[0].startswith("::error title=jobbench action post::artifact ")
    assert "pr-number holds" in said[0] and "not a pull request number" in said[0]
    assert github.requests == []  # refused before any call


def test_a_huge_number_file_is_not_read_whole(tmp_path: Path, github: FakeGitHub) -> None:
    code, said = post(finished_run(tmp_path, github), artifact(tmp_path, "4" * 100_000, "v"))
    assert code == 2 and "not a pull request number" in said[0]


def test_a_symlinked_file_is_refused(tmp_path: Path, github: FakeGitHub) -> None:
    folder = artifact(tmp_path, "42", "verdict")
    (folder / "comment.md").unlink()
    secret = tmp_path / "secret"
    secret.write_text("a file of the runner")
    (folder / "comment.md").symlink_to(secret)
    code, said = post(finished_run(tmp_path, github), folder)
    assert code == 2
    assert "comment.md is missing or not a regular file" in said[0]
    assert github.calls("POST") == []


def test_an_oversized_comment_is_cut_under_githubs_limit(
    tmp_path: Path, github: FakeGitHub
) -> None:
    body = "| row | change |\n" + "| a | +1% |\n" * 20_000  # 240 kB
    code, _ = post(finished_run(tmp_path, github), artifact(tmp_path, "42", body))
    assert code == 0
    posted = github.calls("POST")[0].body["body"]
    assert len(posted) < 65_536
    assert posted.rstrip().endswith("the whole comment is in the run's job summary.)*")


def test_markers_inside_the_body_are_taken_out(tmp_path: Path, github: FakeGitHub) -> None:
    """A forged marker in the middle cannot make a second comment look like the bot's."""
    forged = f"<!-- jobbench-perf-gate suite=steady -->\nverdict\n{MARKER}\nmore\n"
    code, _ = post(finished_run(tmp_path, github), artifact(tmp_path, "42", forged))
    assert code == 0
    posted = github.calls("POST")[0].body["body"]
    assert posted == "<!-- jobbench-perf-gate suite=steady -->\nverdict\n\nmore\n"


def test_a_pr_whose_head_moved_on_gets_nothing(tmp_path: Path, github: FakeGitHub) -> None:
    """The run benchmarked another commit than the PR's head: a newer push's run comments, or
    the artifact names a PR it did not come from."""
    run = finished_run(tmp_path, github, head="3" * 40)
    code, said = post(run, artifact(tmp_path, "42", "verdict"))
    assert code == 0
    assert said == [
        "::notice title=perf gate comment::not posted: PR #42's head is 222222222222, the "
        "finished run's 333333333333 (a newer push's run comments, or the artifact names "
        "another PR)"
    ]
    assert github.calls("POST") == [] and github.calls("PATCH") == []


def test_a_pr_that_does_not_exist_is_refused(tmp_path: Path, github: FakeGitHub) -> None:
    code, said = post(finished_run(tmp_path, github), artifact(tmp_path, "7", "verdict"))
    assert code == 2
    assert said == [
        "::error title=jobbench action post::artifact: pull request #7 is not in "
        "runpod/runpod-python; the artifact must come from that PR's run"
    ]


def test_it_runs_on_workflow_run_events_only(tmp_path: Path, github: FakeGitHub) -> None:
    run = Runner(tmp_path, github.url, pr_event())
    code, said = post(run, artifact(tmp_path, "42", "verdict"))
    assert code == 2
    assert said[0].startswith("::error title=jobbench action post::event: no workflow_run")


def test_a_missing_artifact_says_where_to_download_it(tmp_path: Path, github: FakeGitHub) -> None:
    code, said = post(finished_run(tmp_path, github), tmp_path / "nowhere")
    assert code == 2
    assert said[0].endswith("is not a folder; download the fork run's artifact there")
