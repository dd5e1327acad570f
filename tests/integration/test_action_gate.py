"""The action's plan and gate steps, run as the runner runs them: the two commits named from the
pull request's event (its merge base and head) in a real git clone, the cache keys, and the
`jobbench gate` call with its exit code kept for the report."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import run_jobbench
from tests.integration.fake_github import FakeGitHub, Runner, annotations, pr_event, serve
from tests.integration.workflow import git

PLAN = "Name the two commits"
GATE = "Benchmark both commits"


def commit(repo: Path, text: str) -> str:
    (repo / "handler.py").write_text(text)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", text)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    yield from serve()


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An SDK clone in the workspace: main went on after the PR's branch left it at `fork`."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    commits = {"start": commit(origin, "0"), "fork": commit(origin, "1")}
    git(origin, "checkout", "-q", "-b", "feature")
    commits["head"] = commit(origin, "feature")
    git(origin, "checkout", "-q", "main")
    commits["main"] = commit(origin, "merged since")
    git(origin, "tag", "v1")
    (tmp_path / "workspace").mkdir()
    git(tmp_path / "workspace", "clone", "-q", str(origin), ".")
    return commits


def test_the_pr_is_judged_against_its_merge_base_not_the_base_branchs_tip(
    tmp_path: Path, github: FakeGitHub, history: dict[str, str]
) -> None:
    run = Runner(tmp_path, github.url, pr_event(base=history["main"], head=history["head"]))
    done = run.run(PLAN)
    assert done.returncode == 0, done.stdout + done.stderr
    plan = run.outputs["plan"]
    assert (plan["base"], plan["head"]) == (history["fork"], history["head"])
    assert plan["base-name"] == f"base {history['fork'][:7]} (merge base with main)"
    assert plan["head-name"] == f"head {history['head'][:7]} (#42)"
    assert plan["pr-number"] == "42"
    python = ".".join(map(str, sys.version_info[:3]))
    prefix = f"jobbench-v1-Linux-py{python}-"
    assert plan["cache-key"] == f"{prefix}{history['fork']}-{history['head']}"
    assert plan["restore-keys"].split("\n") == [f"{prefix}{history['fork']}-", prefix]
    assert plan["cache-dir"] == str(tmp_path / "home" / ".cache" / "jobbench")
    assert plan["worktrees"] == str(run.workspace / ".git" / "worktrees")
    assert plan["pip-key"].startswith(f"jobbench-pip-v1-Linux-py{python}-")


def test_named_refs_win_over_the_event(
    tmp_path: Path, github: FakeGitHub, history: dict[str, str]
) -> None:
    run = Runner(tmp_path, github.url, {})  # a push or a dispatch: no pull request
    done = run.run(PLAN, {"base": "v1", "head": history["head"][:10]})
    assert done.returncode == 0, done.stdout + done.stderr
    plan = run.outputs["plan"]
    assert (plan["base"], plan["head"]) == (history["main"], history["head"])
    assert plan["base-name"] == f"base {history['main'][:7]} (v1)"
    assert plan["pr-number"] == ""


@pytest.mark.parametrize(
    ("event", "inputs", "error"),
    [
        (
            {},
            {"head": "v1"},
            "inputs base and head: a push event has no pull request to take them from; give both",
        ),
        (
            pr_event(),
            {"base": "v9"},
            "input base: 'v9' is no commit of .; check out the SDK with its history "
            "(actions/checkout with fetch-depth: 0) or name a commit it has",
        ),
        (
            pr_event(head="3" * 40),
            {},
            f"the PR's head commit: '{'3' * 40}' is no commit of .; check out the SDK with",
        ),
        (
            pr_event(),
            {"sdk-path": "sdk"},
            "input sdk-path: sdk is not a git checkout; check out the SDK there",
        ),
    ],
    ids=["no pull request", "a ref the clone lacks", "a shallow clone", "no checkout"],
)
def test_bad_input_is_one_line_naming_it_and_the_fix(
    tmp_path: Path,
    github: FakeGitHub,
    history: dict[str, str],
    event: dict[str, object],
    inputs: dict[str, str],
    error: str,
) -> None:
    del history
    done = Runner(tmp_path, github.url, event).run(PLAN, inputs)
    assert done.returncode == 2
    (said,) = annotations(done.stdout)
    assert said.startswith(f"::error title=jobbench action plan::{error}"), said


def fake_jobbench(tmp_path: Path, code: int) -> Path:
    """A `jobbench` that records its argv and environment, writes a comment and exits `code`."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    fake = bin_dir / "jobbench"
    record = tmp_path / "argv.json"
    fake.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "args = sys.argv[1:]\n"
        f"open({str(record)!r}, 'w').write(json.dumps({{'argv': args, 'env': dict(os.environ)}}))\n"
        "open(args[args.index('--markdown') + 1], 'w').write('### verdict\\n')\n"
        f"sys.exit({code})\n"
    )
    fake.chmod(0o755)
    return bin_dir


BASE, HEAD = "1" * 40, "2" * 40
COMMITS = {"BASE_COMMIT": BASE, "HEAD_COMMIT": HEAD, "BASE_NAME": "base 1111111 (merge base)"}


def gate(
    tmp_path: Path, github: FakeGitHub, code: int, **inputs: str
) -> tuple[Runner, dict[str, Any]]:
    run = Runner(tmp_path, github.url, pr_event())
    path = f"{fake_jobbench(tmp_path, code)}{os.pathsep}{run.bin}{os.pathsep}{os.environ['PATH']}"
    done = run.run(GATE, inputs, {**COMMITS, "HEAD_NAME": "head 2222222 (#42)", "PATH": path})
    assert done.returncode == 0, done.stdout + done.stderr
    return run, json.loads((tmp_path / "argv.json").read_text())


@pytest.mark.parametrize("code", [0, 1, 2, 3, 4, 130])
def test_the_gate_step_keeps_every_exit_code_for_the_report(
    tmp_path: Path, github: FakeGitHub, code: int
) -> None:
    run, _ = gate(tmp_path, github, code)
    assert run.outputs["gate"] == {"exit-code": str(code)}


def test_the_gate_call_names_the_commits_and_the_inputs(tmp_path: Path, github: FakeGitHub) -> None:
    stale = tmp_path / "runner-temp" / "jobbench-action" / "gate.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("an earlier call's verdict")
    run, called = gate(tmp_path, github, 0, suite="seed", budget="30m", lanes="1")
    argv = called["argv"]
    assert argv[:3] == ["gate", BASE[:12], HEAD[:12]]
    flags = dict(zip(argv[3::2], argv[4::2], strict=True))
    assert flags == {
        "--repo": ".",
        "--suite": "seed",
        "--reps": "auto",
        "--budget": "30m",
        "--max-regression": "5%",
        "--lanes": "1",
        "--out": "reports",
        "--markdown": str(stale),
        "--baseline-name": "base 1111111 (merge base)",
        "--candidate-name": "head 2222222 (#42)",
    }
    assert stale.read_text() == "### verdict\n"  # this call's, not the earlier one
    # The report step writes the job summary; the gate does not write it a second time.
    assert "GITHUB_STEP_SUMMARY" not in called["env"]
    assert run.summary.exists() is False


def test_every_flag_of_the_gate_call_is_one_jobbench_accepts(
    tmp_path: Path, github: FakeGitHub
) -> None:
    """The step's argv, given to the real CLI: the only error left is that the two commits are
    not in this empty repo, so every flag and value before them was accepted."""
    _, called = gate(tmp_path, github, 0)
    workspace = tmp_path / "workspace"
    git(workspace, "init", "-q")
    real = run_jobbench(*called["argv"], cwd=workspace, timeout_s=60)
    assert real.returncode == 2, real.stderr
    error = real.stderr.strip()
    assert error.startswith("error: ") and BASE[:12] in error, error
    flags = [arg for arg in called["argv"] if arg.startswith("--")]
    assert flags and not [flag for flag in flags if flag in error], error


def test_a_second_call_in_one_job_never_reports_the_firsts_verdict(
    tmp_path: Path, github: FakeGitHub, history: dict[str, str]
) -> None:
    run = Runner(tmp_path, github.url, pr_event(base=history["main"], head=history["head"]))
    first = run.temp / "jobbench-action" / "gate.md"
    first.parent.mkdir(parents=True)
    first.write_text("### the first call's verdict\n")
    assert run.run(PLAN).returncode == 0
    assert not first.exists()
