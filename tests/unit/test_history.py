"""History, never loss: a run's first rep moves the saved result (and its events) to
`<out>/history/<label>/NNNN.json`, a run without a rep leaves it byte for byte and saves at
`<label>.failed.json`, `LABEL~N` reads the run N back, `jobbench history` lists them and
`jobbench report` says when a result is incomplete. The real loop on the scripted Target of
test_loop.py; the real CLI in this process."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from jobbench.core.run.loop import run_plans
from jobbench.core.run.resolve import resolve
from jobbench.core.run.target_seam import Plan
from jobbench.core.scenario.config import RunConfig
from jobbench.core.scenario.project import load_project
from jobbench.errors import Interrupted, RunFailed, UsageError
from jobbench.render.text.history_text import SavedRun, render_history
from jobbench.render.text.plain_progress import PlainProgress
from jobbench.results.history import archive, saved_labels, worth_keeping
from jobbench.results.model import Comparison
from jobbench.results.store import find_result, read_comparison, read_result, save_document
from tests.unit.cli import run_cli
from tests.unit.test_loop import Script, ScriptedTarget, Step, fine
from tests.unit.test_render_compare import check_golden
from tests.unit.test_render_run import DRAIN, ENV

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """The result's environment asks git for the commit: a process, which unit tests refuse."""
    monkeypatch.setattr("jobbench.core.run.loop.environment", lambda runpod: ENV.model_copy())


def run(out: Path, step: Step = fine, reps: int = 2, label: str = "run") -> Script:
    """One plan through the real loop, events saved, as `jobbench run --label LABEL` does."""
    script = Script()
    config = RunConfig((DRAIN,), reps=reps, label=label, out=out, save_events=True)
    target = ScriptedTarget(label, out / f"{label}.json", script, step)
    run_plans([Plan(config, target)], PlainProgress(quiet=True))
    return script


def fails_first(side: str, rep: int) -> None:
    raise RunFailed("worker w0 exited before it started polling (exit code 2)")


def interrupted_first(side: str, rep: int) -> None:
    raise KeyboardInterrupt


def files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def doc(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def created_on_day(path: Path, day: int) -> None:
    data = doc(path)
    data["created"] = f"2026-01-{day:02d}T08:00:00+00:00"
    path.write_text(json.dumps(data, indent=1) + "\n")


def reps(path: Path) -> int:
    return sum(len(s["reps"]) for s in doc(path)["scenarios"])


def test_a_run_that_fails_before_a_rep_leaves_the_saved_result_byte_for_byte(
    tmp_path: Path,
) -> None:
    run(tmp_path)
    before = files(tmp_path)
    with pytest.raises(RunFailed) as failed:
        run(tmp_path, fails_first)
    after = files(tmp_path)
    assert {k: v for k, v in after.items() if k != "run.failed.json"} == before
    failed_doc = doc(tmp_path / "run.failed.json")
    assert failed_doc["complete"] is False and failed_doc["scenarios"][0]["reps"] == []
    assert failed_doc["error"].startswith("worker w0 exited before it started polling")
    assert str(failed.value).endswith(
        f"result saved in {tmp_path / 'run.failed.json'} "
        f"(no rep ran: {tmp_path / 'run.json'}, an earlier run, kept)"
    )
    assert not (tmp_path / "history").exists()


def test_ctrl_c_before_a_rep_keeps_the_saved_result_and_says_where_each_is(
    tmp_path: Path,
) -> None:
    run(tmp_path)
    before = files(tmp_path)
    with pytest.raises(Interrupted) as stopped:
        run(tmp_path, interrupted_first)
    assert str(stopped.value) == (
        f"interrupted: partial results saved in {tmp_path / 'run.failed.json'} "
        f"(no rep ran: {tmp_path / 'run.json'}, an earlier run, kept)"
    )
    assert {k: v for k, v in files(tmp_path).items() if k != "run.failed.json"} == before
    assert doc(tmp_path / "run.failed.json")["interrupted"] is True


def test_without_a_saved_result_a_failed_run_is_written_at_the_label_as_before(
    tmp_path: Path,
) -> None:
    with pytest.raises(RunFailed) as failed:
        run(tmp_path, fails_first)
    assert "result saved in" not in str(failed.value)
    assert doc(tmp_path / "run.json")["complete"] is False
    assert (tmp_path / "run.events.jsonl").read_text() == ""  # the events of its reps: none
    assert sorted(files(tmp_path)) == ["run.events.jsonl", "run.json"]


def test_each_first_rep_moves_the_saved_result_and_its_events_to_the_next_number(
    tmp_path: Path,
) -> None:
    run(tmp_path, reps=1)
    first = files(tmp_path)
    run(tmp_path, reps=2)
    second = files(tmp_path)
    run(tmp_path, reps=3)
    assert second["history/run/0001.json"] == first["run.json"]
    assert second["history/run/0001.events.jsonl"] == first["run.events.jsonl"]
    assert files(tmp_path)["history/run/0002.json"] == second["run.json"]
    assert [reps(tmp_path / "history/run/0001.json"), reps(tmp_path / "run.json")] == [1, 3]
    events = (tmp_path / "run.events.jsonl").read_text().splitlines()
    assert {json.loads(line)["rep"] for line in events} == {1, 2, 3}  # only this run's


def test_a_result_without_a_rep_is_replaced_not_archived(tmp_path: Path) -> None:
    with pytest.raises(RunFailed):
        run(tmp_path, fails_first)
    assert not worth_keeping(tmp_path / "run.json")
    run(tmp_path, reps=1)
    assert doc(tmp_path / "run.json")["complete"] is True
    assert not (tmp_path / "history").exists() and not (tmp_path / "run.failed.json").exists()


def test_a_file_this_jobbench_cannot_read_is_kept_too(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text('{"schema": "jobbench.result/0", "scenarios": []}')
    (tmp_path / "old.json").write_text("{torn")
    assert worth_keeping(tmp_path / "run.json") and worth_keeping(tmp_path / "old.json")
    assert archive(tmp_path / "old.json") == tmp_path / "history" / "old" / "0001.json"
    run(tmp_path, reps=1)
    assert (tmp_path / "history/run/0001.json").read_text().startswith('{"schema": "jobbench.')


def test_numbers_go_on_up_past_a_deleted_one(tmp_path: Path) -> None:
    for _ in range(3):
        run(tmp_path, reps=1)
    (tmp_path / "history/run/0002.json").unlink()
    run(tmp_path, reps=1)
    assert sorted(p.name for p in (tmp_path / "history/run").glob("*.json")) == [
        "0001.json",
        "0003.json",
    ]


def test_a_comparison_keeps_the_one_before_it(tmp_path: Path) -> None:
    comparison = read_comparison(DATA / "golden-comparison.json")
    path = tmp_path / "a-vs-b.json"
    save_document(comparison, path)
    first = doc(path)
    changed = Comparison.model_validate({**comparison.model_dump(by_alias=True), "verdict": "x"})
    save_document(changed, path)
    kept = doc(tmp_path / "history/a-vs-b/0001.json")
    # its sides (saved labels beside it, no path recorded) are now named from where it is
    assert [kept["baseline"]["path"], kept["candidate"]["path"]] == [
        "../../main.json",
        "../../slower-recheck.json",
    ]
    for key in ("baseline", "candidate"):
        kept[key]["path"] = first[key]["path"]
    assert kept == first
    assert read_comparison(path).verdict == "x"


# --- LABEL~N ------------------------------------------------------------------------------


def test_label_tilde_n_names_the_run_n_back(tmp_path: Path) -> None:
    for count in (1, 2, 3):
        run(tmp_path, reps=count)
    assert find_result("run~0", tmp_path) == tmp_path / "run.json"
    assert find_result("run~1", tmp_path) == tmp_path / "history/run/0002.json"
    assert reps(find_result("run~2", tmp_path)) == 1
    as_file = str(tmp_path / "run.json") + "~1"  # a result file's own history
    assert find_result(as_file, Path("elsewhere")) == tmp_path / "history/run/0002.json"
    with pytest.raises(UsageError) as too_far:
        find_result("run~3", tmp_path)
    assert str(too_far.value) == (
        "run~3: run has 3 saved runs (run~0 to run~2); see `jobbench history run`"
    )
    with pytest.raises(UsageError, match=r"^nope~1: no saved run of nope in .*jobbench run"):
        find_result("nope~1", tmp_path)


def test_compare_reads_a_previous_run_as_a_saved_result_never_a_variant_to_run(
    tmp_path: Path,
) -> None:
    run(tmp_path, reps=1, label="main")  # `main` is a built-in variant too
    run(tmp_path, reps=2, label="main")
    project = load_project(tmp_path)
    assert "main" in project.variants
    side = resolve("main~1", project, tmp_path, None, rerun=True)
    assert side.variant is None and side.doc is not None and len(side.doc.scenarios[0].reps) == 1
    assert side.path == tmp_path / "history/main/0001.json"


def test_compare_of_run_tilde_1_and_run_compares_the_two_saved_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports"
    run(out, reps=1)
    run(out, reps=2)
    code = run_cli(monkeypatch, "compare", "run~1", "run", "--format", "json", cwd=tmp_path)
    assert code == 0, capsys.readouterr().err
    comparison = json.loads(capsys.readouterr().out)
    assert comparison["baseline"]["path"] == "history/run/0001.json"
    assert comparison["candidate"]["path"] == "run.json"
    assert comparison["baseline"]["created"] == doc(out / "history/run/0001.json")["created"]


def test_a_kept_comparison_still_reads_the_runs_it_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports"
    for count in (1, 2):
        run(out, reps=count)
        created_on_day(out / "run.json", count)  # runs here take no time: one a day
    assert run_cli(monkeypatch, "compare", "run~1", "run", "--format", "json", cwd=tmp_path) == 0
    first = json.loads(capsys.readouterr().out)
    run(out, reps=3)  # run.json, the first comparison's candidate, goes to history/run/0002
    assert run_cli(monkeypatch, "compare", "run~1", "run", "--format", "json", cwd=tmp_path) == 0
    kept = out / "history/run-vs-run/0001.json"
    sides = [read_comparison(kept).baseline, read_comparison(kept).candidate]
    assert [side.path for side in sides] == ["../run/0001.json", "../run/0002.json"]
    for side, was in zip(sides, (first["baseline"], first["candidate"])):
        assert doc(kept.parent / str(side.path))["created"] == was["created"]
    assert run_cli(monkeypatch, "report", str(kept), "--html", "p.html", cwd=tmp_path) == 0


# --- jobbench history -----------------------------------------------------------------------


def test_history_lists_every_saved_run_newest_first_with_its_headline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports"
    run(out, reps=1)
    run(out, reps=2)
    with pytest.raises(RunFailed):
        run(out, fails_first)
    (out / "history/run/0007.json").write_text("{torn")
    assert run_cli(monkeypatch, "history", "run", cwd=tmp_path) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "run", "file", "created", "(UTC)", "state", "reps", "scenarios", "time", "to", "99", "%",
        "(median)",
    ]  # fmt: skip
    p99 = doc(out / "run.json")["scenarios"][0]["summary"]["time_to_p99_s"]["median"]
    created = doc(out / "run.json")["created"].replace("T", " ").removesuffix("+00:00")
    assert lines[1].split() == [
        "run~0", "run.json", *created.split(), "complete", "2", "1", DRAIN.name, f"{p99:.3f}", "s",
    ]  # fmt: skip
    assert lines[2].split()[:2] == ["run~1", "history/run/0007.json"]
    assert "unreadable: not a readable JSON result" in lines[2]
    assert lines[3].split()[:2] == ["run~2", "history/run/0001.json"]
    assert lines[3].split()[4:7] == ["complete", "1", "1"]
    assert lines[4].split()[:2] == ["run.failed", "run.failed.json"]
    assert lines[4].split()[4:7] == ["incomplete", "0", "1"]
    assert len(lines) == 5


def test_history_without_a_label_lists_each_label_and_skips_comparisons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports"
    run(out, reps=1, label="a")
    run(out, reps=1, label="b")
    save_document(read_comparison(DATA / "golden-comparison.json"), out / "a-vs-b.json")
    assert saved_labels(out) == ["a", "a-vs-b", "b"]
    assert run_cli(monkeypatch, "history", cwd=tmp_path) == 0
    refs = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert refs == ["a~0", "b~0"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["history"], "error: --out reports: no saved run in it; `jobbench run --label run`"),
        (["history", "nope"], "error: --out reports: no saved run of nope in it"),
        (["history", "run~1"], "error: run~1: give the label, `jobbench history run` lists"),
    ],
)
def test_history_of_nothing_is_one_line_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    said: str,
) -> None:
    (tmp_path / "reports").mkdir()
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == 2
    err = capsys.readouterr().err
    assert err.startswith(said) and len(err.splitlines()) == 1, err


def test_history_table_golden() -> None:
    """The table at a glance, on files earlier versions wrote (tests/unit/data): regenerate
    with JOBBENCH_UPDATE_GOLDEN=1."""
    runs = [
        SavedRun("old-b~0", "old-b.json", read_result(DATA / "old-b.json")),
        SavedRun("old-b~1", "history/old-b/0002.json", read_result(DATA / "live.json")),
        SavedRun("old-b~2", "history/old-b/0001.json", None, "unreadable: not a JSON object"),
        SavedRun("old-b.failed", "old-b.failed.json", read_result(DATA / "no-reps.json")),
    ]
    text = io.StringIO()
    render_history(runs, text)
    check_golden("history.txt", text.getvalue())


# --- report says when a result is incomplete ---------------------------------------------------


def test_report_of_an_incomplete_result_warns_with_its_error_and_reps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports"

    def breaks_in_rep_2(side: str, rep: int) -> None:
        if rep == 2:
            raise RunFailed("rep 2 did not finish")

    with pytest.raises(RunFailed):
        run(out, breaks_in_rep_2, reps=3)
    assert run_cli(monkeypatch, "report", "run", "--html", "page.html", cwd=tmp_path) == 0
    warning = capsys.readouterr().err.strip()
    assert warning.startswith("warning: reports/run.json is incomplete (rep 2 did not finish")
    assert warning.endswith("); 1 rep") and len(warning.splitlines()) == 1
    assert (tmp_path / "page.html").is_file()


def test_report_of_a_result_without_reps_says_the_page_has_no_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports"
    run(out, reps=1)
    with pytest.raises(RunFailed):
        run(out, fails_first)
    assert run_cli(monkeypatch, "report", "run.failed", "--html", "p.html", cwd=tmp_path) == 0
    err = capsys.readouterr().err
    assert err.startswith(
        "warning: reports/run.failed.json is incomplete (worker w0 exited before it started "
        "polling (exit code 2); logs kept in "
    )
    assert err.endswith("); no reps: the page has no figures\n") and err.count("\n") == 1
    assert run_cli(monkeypatch, "report", "run", "--html", "p.html", cwd=tmp_path) == 0
    assert capsys.readouterr().err == ""  # the kept result is complete
