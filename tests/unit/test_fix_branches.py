"""benchmarks/fix_branches.py's edit tables: every edit's old text is in runpod 1.12.0 exactly
once and the branch it makes is Python; the jobbench.toml it writes is a valid project; its
checks of each branch's behaviour read the queue's events as the rules say.

The 1.12.0 text is the installed runpod's (jobbench pins runpod==1.12.0, so CI has it too; it is
the tag's text, byte for byte), read as a file: nothing is imported or started. The script itself
checks the same on the clone it builds from."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from jobbench.core.scenario.project import SEED_ROWS, load_project

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def fb() -> ModuleType:
    """The script as a module (it imports planted_defects from its own folder)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(
            "fix_branches", BENCHMARKS / "fix_branches.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


def sdk_112_text(file: str) -> str:
    assert importlib.metadata.version("runpod") == "1.12.0"
    spec = importlib.util.find_spec("runpod")
    assert spec is not None and spec.origin is not None
    return (Path(spec.origin).parent.parent / file).read_text()


def test_each_edit_is_in_1_12_0_once_and_the_branch_is_python(fb: ModuleType) -> None:
    for branch in fb.BRANCHES:
        for file in sorted({edit.file for edit in branch.edits}):
            text = sdk_112_text(file)
            for edit in (e for e in branch.edits if e.file == file):
                assert text.count(edit.old) == 1, (branch.name, edit.old)
            made = fb.apply_edits(branch.name, file, text, branch.edits)
            compile(made, file, "exec")  # a syntax error would show only once a worker starts
            for edit in (e for e in branch.edits if e.file == file):
                assert edit.new in made, (branch.name, edit.new)  # no later edit undid it


def test_the_branches_say_their_rules(fb: ModuleType) -> None:
    made = {
        b.name: fb.apply_edits(b.name, fb.SCALE, sdk_112_text(fb.SCALE), b.edits)
        for b in fb.BRANCHES
    }
    # jobbench's SDK probe looks for "take_ahead" before it runs a --take-ahead K side.
    assert "take_ahead" in made["take-ahead"] and "take_ahead" not in made["job-cache"]
    assert "min(jobs_needed * 3, 50)" in made["job-cache"]
    assert "JobCache(max_cache_size=100)" in made["job-cache"]


def test_an_edit_whose_text_moved_is_refused(fb: ModuleType) -> None:
    edit = fb.Edit("f.py", "old line\n", "new line\n")
    assert fb.apply_edits("b", "f.py", "a\nold line\nz\n", (edit,)) == "a\nnew line\nz\n"
    for text, times in (("a\nz\n", 0), ("old line\nold line\n", 2)):
        with pytest.raises(fb.EditMissing, match=f"there {times} times, not once"):
            fb.apply_edits("b", "f.py", text, (edit,))


def test_the_project_it_writes_is_valid(fb: ModuleType, tmp_path: Path) -> None:
    folder = tmp_path / "take-ahead"
    folder.mkdir()
    for branch in fb.BRANCHES:
        (tmp_path / f"sdk-{branch.name}").mkdir()
    rows = [SEED_ROWS[0][0], SEED_ROWS[3][0]]
    (folder / "jobbench.toml").write_text(fb.project_toml(list(fb.BRANCHES), rows, 16))
    project = load_project(folder)
    sdk = project.variants["take-ahead-sdk"].worker
    assert (sdk.kind, sdk.take_ahead, sdk.sdk_path) == ("runpod", 16, tmp_path / "sdk-take-ahead")
    model = project.variants["take-ahead-model"].worker
    assert (model.kind, model.policy, model.take_ahead) == ("model", "sdk-take-ahead", 16)
    cache = project.variants["job-cache-model"].worker
    assert (cache.policy, cache.take_ahead) == ("job-cache", 0)
    assert project.variants["job-cache-sdk"].worker.take_ahead == 0
    suite = project.suites["rows"]
    assert [s.name for s in suite.scenarios] == rows
    seed = {s.name: s for s in project.suites["seed"].scenarios}
    for row in suite.scenarios:  # the seed row itself: slots, metric and all
        assert row == seed[row.name]


def event(ev: str, t: int, worker: str = "w0", **more: Any) -> dict[str, Any]:
    return {"ev": ev, "t": t, "worker": worker, "scenario": "s", "rep": 1, **more}


def test_a_take_while_every_slot_is_busy_is_take_ahead(fb: ModuleType) -> None:
    slots = fb.SLOTS
    first = [event("deliver", 10) for _ in range(slots)]
    ahead = event("take", 20, asked=32, arrived=15)  # arrived while all `slots` jobs run
    after = [event("done", 30) for _ in range(slots)]
    late = event("take", 40, asked=32, arrived=35)  # arrived after they ended
    events = [*first, ahead, *after, late]
    assert fb.takes_while_full(events, slots) == 1
    take_ahead = next(b for b in fb.BRANCHES if b.name == "take-ahead")
    deep = [SEED_ROWS[0][0]]
    assert fb.check_behaviour(take_ahead, events, 32, deep) is None
    assert "all busy" in fb.check_behaviour(take_ahead, [*first, *after, late], 32, deep)
    shallow = [SEED_ROWS[3][0]]  # its take-ahead waits out the rep: no event shows it
    assert fb.check_behaviour(take_ahead, [*first, *after, late], 32, shallow) is None


def test_the_job_cache_asks_three_times_its_need_at_most_50(fb: ModuleType) -> None:
    cache = next(b for b in fb.BRANCHES if b.name == "job-cache")
    rows = [SEED_ROWS[0][0]]
    takes = [event("take", t, asked=asked) for t, asked in enumerate((50, 42, 3))]
    assert fb.check_behaviour(cache, takes, 0, rows) is None
    assert "none of min" in fb.check_behaviour(cache, [*takes, event("take", 9, asked=32)], 0, rows)
    assert "every slot free" in fb.check_behaviour(cache, takes[1:], 0, rows)


def test_a_branch_that_does_not_reproduce_itself_is_called_so(
    fb: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ten reps a side: the model a steady 1 % from the branch, within 2 % however the branch
    # ran; once the branch's second set of workers ran 4 % slower, no bound can be shown.
    row = SEED_ROWS[1][0]
    branch = next(b for b in fb.BRANCHES if b.name == "job-cache")
    reps = [19.0 * (1 + 0.002 * ((i * 7) % 5 - 2)) for i in range(10)]
    slower = [v * 1.04 for v in reps]
    real = {branch.name: {row: fb.Row("time_to_p99_s", reps, [v * 1.01 for v in reps], 0)}}
    sim = {row: fb.Row("time_to_p99_s", [v * 0.99 for v in reps], [], 0)}
    same = {branch.name: {row: fb.Row("time_to_p99_s", reps, list(reps), 0)}}
    assert fb.report([row], real, same, sim, [branch]) is True
    assert "model within 2 %; sim within 2 % |" in capsys.readouterr().out
    apart = {branch.name: {row: fb.Row("time_to_p99_s", reps, slower, 0)}}
    assert fb.report([row], real, apart, sim, [branch]) is False
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("| job-cache"))
    assert "| +4.0% [" in line and "the branch against itself past 2 %" in line
    assert fb.report([row], real, {}, sim, [branch]) is True  # run with --no-a-a
    assert "| not run |" in capsys.readouterr().out


def compare_doc(row: str, a: list[float], b: list[float], flagged_b: int = 0) -> dict[str, Any]:
    """A compare JSON document's parts the script reads: one row, its reps, one B rep flagged."""
    excluded = [{"side": "B", "rep": 1, "reason": "flagged: saturated"}] if flagged_b else []
    values = {"values": {"baseline": a, "candidate": b}, "excluded": excluded}
    return {"rows": [{"scenario": row, "metric": "m", "metrics": {"m": values}}]}


def test_more_reps_pool_with_the_kept_runs_in_the_order_they_ran(
    fb: ModuleType, tmp_path: Path
) -> None:
    for name in ("reports", "reports-10", "reports-2", "again", "reports-x"):
        (tmp_path / name).mkdir()
    assert [p.name for p in fb.runs_of(tmp_path, "reports")] == [
        "reports",
        "reports-2",
        "reports-10",
    ]
    assert fb.next_run(tmp_path) == 4
    assert fb.next_run(tmp_path / "none") == 1
    first = compare_doc("r1", [1.0, 2.0], [3.0, 4.0])
    more = compare_doc("r1", [5.0], [6.0, 7.0], flagged_b=1)
    rows = fb.pooled([first, more, compare_doc("r2", [8.0], [9.0])])
    assert rows["r1"] == fb.Row("m", [1.0, 2.0, 5.0], [3.0, 4.0, 7.0], 1)
    assert rows["r2"] == fb.Row("m", [8.0], [9.0], 0)


def test_a_take_is_matched_with_its_own_runs_jobs(fb: ModuleType) -> None:
    # Two runs' rep 1 with the same worker name: the second run's take, sent with nothing
    # delivered in that run, is not a take-ahead because the first run's jobs were running.
    first = [{**event("deliver", 10), "run": 0} for _ in range(fb.SLOTS)]
    take = {**event("take", 20, asked=32, arrived=15), "run": 1}
    assert fb.takes_while_full([*first, take], fb.SLOTS) == 0
    assert fb.takes_while_full([*first, {**take, "run": 0}], fb.SLOTS) == 1
