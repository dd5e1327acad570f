"""The `fixes` suite (docs/fixes.md): every fix on one table. A suite that names
variants has compare run those that are neither side and set all of them side by side
(verdict/side_by_side.py, render/text/side_by_side_text.py); simulated here, in this process."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from jobbench.core.scenario.project import BUILTIN_SUITES, BUILTIN_VARIANTS, FIX_VARIANTS
from jobbench.errors import EXIT_OK, EXIT_USAGE
from jobbench.render.text.side_by_side_text import render_side_by_side
from jobbench.results import store
from jobbench.verdict.side_by_side import FIGURES, NOT_DONE, Line, SideBySide
from jobbench.workers.policies import DRAIN, JOB_CACHE, SDK_112, SDK_TAKE_AHEAD, TAKE_AHEAD
from tests.unit.cli import run_cli
from tests.unit.test_render_compare import check_golden

FIVE = ("time to 99 %", "steady e2e p99", "worker-seconds", "held jobs", "split (Jain)")


@pytest.fixture(autouse=True)
def no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    # git and uname are processes, which unit tests never start
    monkeypatch.setattr(store, "_git_sha", lambda: "0" * 40)
    monkeypatch.setattr(store.platform, "platform", lambda: "Linux")


def test_the_fixes_suite_has_every_row_and_every_fix() -> None:
    suite = BUILTIN_SUITES["fixes"]
    assert [s.name for s in suite.scenarios] == [
        "4w-1024j-0.5s",  # a deep burst
        "4w-64j-0.5s-shallow",  # the shallow burst
        "4w-25pct-poisson-21jps",  # steady load at 25, 50 and 90 % of capacity
        "4w-50pct-poisson-42jps",
        "4w-90pct-poisson-76jps",
        "qd4-burst-1024",  # the autoscaled fleet: deep, and a shallow burst of long jobs
        "qd2-64j-8s",
    ]
    assert suite.variants == FIX_VARIANTS
    assert FIX_VARIANTS == (
        "main", "pr", "sdk-main", "sdk-pr", "job-cache", "server-fix", "server-extra"
    )  # fmt: skip
    workers = {name: BUILTIN_VARIANTS[name].worker for name in FIX_VARIANTS}
    assert [(w.policy, w.take_ahead) for w in workers.values()] == [
        (DRAIN, 0),
        (TAKE_AHEAD, 32),
        (SDK_112, 0),  # the baseline of the two fixes on the SDK's mechanics
        (SDK_TAKE_AHEAD, 32),
        (JOB_CACHE, 0),
        (DRAIN, 0),  # main's policy, on a server whose take is fast
        (DRAIN, 0),  # main's policy, on a server that hands a take the PR's K more
    ]
    # Each half of a server-side fix alone, the other as RunPod's queue has it.
    assert BUILTIN_VARIANTS["server-fix"].latency == {"take": 0.03}
    assert BUILTIN_VARIANTS["server-extra"].latency == {"take_extra": 32}
    assert [figure.title for figure in FIGURES] == list(FIVE)


def test_compare_main_pr_on_the_fixes_suite_sets_every_fix_side_by_side(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("compare", "main", "pr", "--suite", "fixes", "--target", "sim", "--reps", "1", "-q")
    assert run_cli(monkeypatch, *args, "--format", "json", cwd=tmp_path) == EXIT_OK
    json.loads(capsys.readouterr().out)  # the JSON format stays one document on stdout
    reports = tmp_path / "reports"
    for name in FIX_VARIANTS:
        assert json.loads((reports / f"{name}.json").read_text())["target"]["kind"] == "sim"
    table = (reports / "main-vs-pr.fixes.md").read_text().splitlines()
    assert table[2] == (
        "| scenario | figure | main | pr | sdk-main | sdk-pr | job-cache | server-fix "
        "| server-extra |"
    )
    lines = {
        tuple(cell.strip() for cell in row.split("|")[1:3]): row
        for row in table[4:]
        if row.startswith("| ")
    }
    deep = lines["4w-1024j-0.5s", "time to 99 %"]
    assert "7.550 s" in deep and "4.050 s *" in deep  # drain, and the ideal take-ahead 32
    for name in FIX_VARIANTS:  # each variant's server, as its result records it
        latency = json.loads((reports / f"{name}.json").read_text())["scenarios"][0]["params"]
        assert latency["latency"].get("take_extra", 0) == (32 if name == "server-extra" else 0)
    for title in ("steady e2e p99", "held jobs", "split (Jain)"):
        assert ("4w-90pct-poisson-76jps", title) in lines
    assert ("4w-90pct-poisson-76jps", "time to 99 %") not in lines  # a profile's: its length
    assert ("qd4-burst-1024", "worker-seconds") in lines
    assert ("4w-1024j-0.5s", "worker-seconds") not in lines  # a fixed fleet bills none
    assert {title for _, title in lines} == set(FIVE)
    # The table format shows it after the comparison; saved results are read, not run again.
    # The PR-comment body (--markdown) and the saved comparison carry it after A against B.
    body = tmp_path / "comment.md"
    assert run_cli(monkeypatch, *args, "--markdown", str(body), cwd=tmp_path) == EXIT_OK
    out = capsys.readouterr().out
    assert "fixes: every variant side by side" in out and "server-fix" in out
    for markdown in (body.read_text(), (reports / "main-vs-pr.md").read_text()):
        a_b, every = markdown.split("### fixes: every variant side by side")
        assert "A = main" in a_b and "job-cache" not in a_b
        assert [line for line in every.splitlines() if line] == [line for line in table if line][1:]


SUITE = """
[variants.slow-take]
worker = "model"
policy = "drain"
latency = {take = 0.8}

[suites.small]
reps = 1
variants = ["main", "pr", "slow-take"]
scenarios = [{name = "deep", workers = 1, slots = 8, burst = 64, job_seconds = 0.5}]
"""


def test_a_suite_of_jobbench_toml_names_its_variants(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE)
    args = ("compare", "main", "pr", "--suite", "small", "--target", "sim", "-q")
    assert run_cli(monkeypatch, *args, "--format", "markdown", cwd=tmp_path) == EXIT_OK
    out = capsys.readouterr().out
    assert "| scenario | figure | main | pr | slow-take |" in out
    # A side that is also one of the suite's variants is not run twice.
    assert run_cli(monkeypatch, "compare", "main", "slow-take", *args[3:], cwd=tmp_path) == 0
    assert "| main | slow-take | pr |" not in capsys.readouterr().out  # the table format's
    # The gate settles two sides (--reps auto) and judges them: no other variant runs.
    gate = ("gate", "main", "pr", *args[3:], "--out", "gated")
    assert run_cli(monkeypatch, *gate, cwd=tmp_path) == EXIT_OK
    assert sorted(p.name for p in (tmp_path / "gated").glob("*.json")) == [
        "main-vs-pr.json",
        "main.json",
        "pr.json",
    ]


@pytest.mark.parametrize(
    ("toml", "args", "message"),
    [
        ("", ("main", "nosuch"), "error: 'nosuch' is not a result, a saved label, a variant"),
        ("", ("main", "pr", "--suite", "fixs"), "error: --suite fixs: no such suite; known: "),
        (
            SUITE.replace('"slow-take"]', '"slow-tak"]'),
            ("main", "pr", "--suite", "small"),
            "error: jobbench.toml suites.small: variants: 'slow-tak' is no variant; known: ",
        ),
        (
            SUITE.replace('["main", "pr", "slow-take"]', '"pr"'),
            ("main", "pr", "--suite", "small"),
            "error: jobbench.toml suites.small: variants must be a list of variant names",
        ),
        (
            SUITE.replace('"slow-take"]', '"pr"]'),
            ("main", "pr", "--suite", "small"),
            "error: jobbench.toml suites.small: variants ['main', 'pr', 'pr']: a name is given",
        ),
    ],
)
def test_a_bad_variant_or_suite_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    toml: str,
    args: tuple[str, ...],
    message: str,
) -> None:
    if toml:
        (tmp_path / "jobbench.toml").write_text(toml)
    code = run_cli(monkeypatch, "compare", *args, "--target", "sim", cwd=tmp_path)
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(message), err
    assert err.count("\n") == 1
    assert not (tmp_path / "reports").exists()


def _table() -> SideBySide:
    time, steady, cost, held, jain = FIGURES
    done = (True, True, False)
    return SideBySide(
        ("main", "pr", "job-cache"),
        (
            Line("4w-1024j-0.5s", time, (7.55, 4.05, 7.25)),
            Line("4w-1024j-0.5s", held, (0, 0, 28)),
            Line("4w-1024j-0.5s", jain, (1.0, 1.0, 0.996)),
            Line("4w-90pct-poisson-76jps", steady, (1.396, 1.396, 1.584)),
            Line("qd2-64j-8s", cost, (30.4, 16.05, 30.94)),
            Line("qd2-64j-8s", jain, (1.0, None, 0.76)),
            # job-cache the fastest here, but it left 5 jobs not done: never the best
            Line("4w-64j-0.5s-shallow", NOT_DONE, (0, 0, 5), done),
            Line("4w-64j-0.5s-shallow", time, (0.61, 0.65, 0.52), done),
        ),
    )


def test_a_variant_that_left_jobs_not_done_is_never_the_best() -> None:
    out = io.StringIO()
    render_side_by_side(_table(), out, markdown=True)
    shallow = [line for line in out.getvalue().splitlines() if "shallow" in line]
    assert shallow == [
        "| 4w-64j-0.5s-shallow | jobs not done | 0 * | 0 * | 5 |",
        "| 4w-64j-0.5s-shallow | time to 99 % | 0.610 s * | 0.650 s | 0.520 s |",
    ]


@pytest.mark.parametrize(("markdown", "name"), [(True, "fixes.md"), (False, "fixes_table.txt")])
def test_the_side_by_side_table_renders_as_its_golden_file(markdown: bool, name: str) -> None:
    out = io.StringIO()
    render_side_by_side(_table(), out, markdown=markdown)
    check_golden(name, out.getvalue())


def test_a_variant_that_did_not_complete_says_why_under_the_table() -> None:
    """A variant beside the comparison whose workers stopped its reps (core/run/loop.py):
    its column keeps the reps that ran, and a line under the legend says why it stopped."""
    stopped = ("job-cache", "4w-64j-0.5s-shallow rep 2: worker w1 hung")
    table = replace(_table(), incomplete=(stopped,))
    out = io.StringIO()
    render_side_by_side(table, out, markdown=True)
    assert out.getvalue().endswith(
        "\njob-cache did not complete: 4w-64j-0.5s-shallow rep 2: worker w1 hung\n"
    )
