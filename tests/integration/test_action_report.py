"""The action's report step, run as the runner runs it against a stand-in GitHub API on a
loopback port: the check's outcome from the gate's exit code and the accept label, one sticky
comment per suite found again by its marker, the job summary and the step's outputs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.fake_github import (
    BOT,
    HUMAN,
    FakeGitHub,
    Runner,
    annotations,
    pr_event,
    serve,
)

MARKER = "<!-- jobbench-perf-gate -->"
VERDICT = "### ❌ regression: slower in 1w-512j-0.5s, 4.8 min\n\n| row | change |\n|---|---|\n"
STEP = "Decide the check"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    yield from serve()


def runner(
    tmp_path: Path, github: FakeGitHub, labels: tuple[str, ...] = (), fork: bool = False
) -> Runner:
    return Runner(tmp_path, github.url, pr_event(labels=labels, fork=fork))


def report(
    run: Runner, gate_exit: str, markdown: str | None = VERDICT, **inputs: str
) -> tuple[int, list[str]]:
    """The step's exit code and annotations, after a gate that exited `gate_exit` ("" for a
    gate that did not run) and wrote `markdown` (None: nothing)."""
    folder = run.temp / "jobbench-action"
    folder.mkdir(parents=True, exist_ok=True)
    if markdown is not None:
        (folder / "gate.md").write_text(markdown)
    run.outputs["gate"] = {"exit-code": gate_exit}
    done = run.run(STEP, inputs)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, annotations(done.stdout)


def test_the_first_run_posts_one_comment_with_the_marker_the_verdict_and_the_run(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.add_comment(42, HUMAN, "LGTM")
    run = runner(tmp_path, github)
    code, said = report(run, "1")
    assert code == 1 and said == [
        "::error title=perf regression::slower than --max-regression (job summary)"
    ]
    (posted,) = github.calls("POST")
    assert posted.path == "/repos/runpod/runpod-python/issues/42/comments"
    assert posted.authorization == "Bearer test-token"
    body = posted.body["body"]
    assert body.startswith(MARKER + "\n") and VERDICT.strip() in body
    assert "https://github.com/runpod/runpod-python/actions/runs/77" in body
    outputs = run.outputs["report"]
    assert outputs["verdict"] == "regression" and outputs["accepted"] == "false"
    assert Path(outputs["comment-file"]).read_text() == body
    assert (Path(outputs["comment-dir"]) / "pr-number").read_text() == "42\n"
    summary = run.summary.read_text()
    assert VERDICT.strip() in summary and MARKER not in summary


def test_a_later_run_edits_the_bots_marked_comment_only(tmp_path: Path, github: FakeGitHub) -> None:
    github.add_comment(42, HUMAN, f"quoting the bot: {MARKER} old verdict")
    github.add_comment(42, BOT, "another bot's comment")
    ours = github.add_comment(42, BOT, f"{MARKER}\nold verdict")
    code, _ = report(runner(tmp_path, github), "0", "### ✅ pass: no row is slower\n")
    assert code == 0
    assert github.calls("POST") == []
    (edited,) = github.calls("PATCH")
    assert edited.path == f"/repos/runpod/runpod-python/issues/comments/{ours}"
    assert "✅ pass" in edited.body["body"] and "old verdict" not in edited.body["body"]
    assert [c["body"] for c in github.comments[42]][:2] == [
        f"quoting the bot: {MARKER} old verdict",
        "another bot's comment",
    ]


def test_the_marked_comment_is_found_past_the_first_page(
    tmp_path: Path, github: FakeGitHub
) -> None:
    for n in range(130):
        github.add_comment(42, HUMAN, f"comment {n}")
    ours = github.add_comment(42, BOT, f"{MARKER}\nold verdict")
    report(runner(tmp_path, github), "0")
    pages = [r.query.get("page", ["1"])[0] for r in github.calls("GET") if "comments" in r.path]
    assert pages == ["1", "2"]
    (edited,) = github.calls("PATCH")
    assert edited.path.endswith(f"/issues/comments/{ours}")


def test_another_suite_keeps_a_comment_of_its_own(tmp_path: Path, github: FakeGitHub) -> None:
    gate_comment = github.add_comment(42, BOT, f"{MARKER}\nthe gate suite's verdict")
    run = runner(tmp_path, github)
    report(run, "0", suite="steady")
    (posted,) = github.calls("POST")
    assert posted.body["body"].startswith("<!-- jobbench-perf-gate suite=steady -->\n")
    assert "**Suite `steady`**" in posted.body["body"]
    report(run, "1", suite="steady")
    (edited,) = github.calls("PATCH")
    assert not edited.path.endswith(f"/{gate_comment}")
    assert github.comments[42][0]["body"] == f"{MARKER}\nthe gate suite's verdict"


def test_the_accept_label_passes_a_regression_and_says_so(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.labels[42] = ["perf-accepted", "docs"]
    run = runner(tmp_path, github)
    code, said = report(run, "1")
    assert code == 0
    assert said == [
        "::warning title=perf regression accepted::a regression, accepted by label "
        "perf-accepted: the check passes"
    ]
    body = github.calls("POST")[0].body["body"]
    assert "**Accepted by label `perf-accepted`**: the regression below is reported" in body
    assert VERDICT.strip() in body  # the regression itself is still shown
    assert run.outputs["report"]["accepted"] == "true"
    assert run.outputs["report"]["verdict"] == "regression"


def test_the_label_is_read_when_the_step_runs_not_from_the_event(
    tmp_path: Path, github: FakeGitHub
) -> None:
    """A re-run replays the event as it was: a label added since counts, one removed does not."""
    github.labels[42] = []
    code, _ = report(runner(tmp_path, github, labels=("perf-accepted",)), "1")
    assert code == 1
    github.labels[42] = ["perf-accepted"]
    code, _ = report(runner(tmp_path / "again", github), "1")
    assert code == 0


def test_the_events_labels_count_when_the_api_cannot_list_them(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.refuse["GET"] = 403
    run = runner(tmp_path, github, labels=("perf-accepted",))
    code, said = report(run, "1", comment="false")
    assert code == 0 and said[0].startswith("::warning title=perf regression accepted::")


def test_another_accept_label_or_none(tmp_path: Path, github: FakeGitHub) -> None:
    github.labels[42] = ["perf-accepted"]
    code, _ = report(runner(tmp_path, github), "1", **{"accept-label": "slower-on-purpose"})
    assert code == 1
    code, _ = report(runner(tmp_path / "none", github), "1", **{"accept-label": ""})
    assert code == 1


def test_the_label_does_not_turn_a_failed_gate_into_a_pass(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.labels[42] = ["perf-accepted"]
    code, said = report(runner(tmp_path, github), "4", markdown=None)
    assert code == 4
    assert said == ["::error title=perf gate failed::jobbench gate exited 4 (error above)"]
    assert "`jobbench gate` exited 4" in github.calls("POST")[0].body["body"]


@pytest.mark.parametrize(
    ("gate_exit", "code", "verdict", "says"),
    [
        ("3", 0, "inconclusive", "Inconclusive is a warning: the check passes."),
        ("2", 2, "failed", "**jobbench perf gate: no verdict**: `jobbench gate` exited 2."),
        ("130", 130, "failed", "`jobbench gate` exited 130"),
        ("", 1, "none", "**jobbench perf gate: no verdict**: an earlier step failed."),
    ],
    ids=["inconclusive", "usage error", "interrupted", "the gate did not run"],
)
def test_every_other_exit_says_what_happened(
    tmp_path: Path, github: FakeGitHub, gate_exit: str, code: int, verdict: str, says: str
) -> None:
    run = runner(tmp_path, github)
    markdown = "### ⚠️ inconclusive: unsettled\n" if gate_exit == "3" else None
    got, said = report(run, gate_exit, markdown)
    assert got == code and run.outputs["report"]["verdict"] == verdict
    assert len(said) == 1
    assert said[0].startswith("::warning" if code == 0 else "::error")
    assert says in github.calls("POST")[0].body["body"]


def test_a_fork_gets_no_comment_but_its_artifact(tmp_path: Path, github: FakeGitHub) -> None:
    run = runner(tmp_path, github, fork=True)
    code, said = report(run, "0")
    assert code == 0 and github.calls("POST") == []
    assert said[0].startswith("::notice title=perf gate comment::a fork's pull request")
    folder = Path(run.outputs["report"]["comment-dir"])
    assert (folder / "pr-number").read_text() == "42\n"
    assert (folder / "comment.md").read_text().startswith(MARKER)


def test_comment_false_posts_nothing(tmp_path: Path, github: FakeGitHub) -> None:
    code, _ = report(runner(tmp_path, github), "1", comment="false")
    assert code == 1
    assert github.calls("POST") == [] and github.calls("PATCH") == []


def test_a_comment_that_cannot_be_posted_does_not_change_the_check(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.refuse["POST"] = 403
    code, said = report(runner(tmp_path, github), "0")
    assert code == 0
    assert said == [
        "::warning title=perf gate comment::not posted: POST "
        "/repos/runpod/runpod-python/issues/42/comments: HTTP 403 (Resource not accessible "
        "by integration)"
    ]


def test_a_bad_comment_input_is_one_line_naming_it(tmp_path: Path, github: FakeGitHub) -> None:
    code, said = report(runner(tmp_path, github), "0", comment="yes")
    assert code == 2
    assert said == [
        "::error title=jobbench action report::input comment: 'yes' is not true or false; "
        "give true or false"
    ]
