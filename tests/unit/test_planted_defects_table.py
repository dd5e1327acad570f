"""benchmarks/planted_defects.py's table of defects: every defect's old text is in runpod 1.12.0
exactly once and the file it makes still compiles; each names a check the gate has (by the
words the gate's own reasons use) or says the gate lacks one and wants it passed; each is gated
on a suite the project it writes has.

The 1.12.0 text is the installed runpod's (jobbench pins runpod==1.12.0, so CI has it too; it is
the tag's text, byte for byte), read as a file: nothing is imported or started. The script
checks the same on the clone it builds from (`--plant-only` builds and checks every branch)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from jobbench.core.scenario.project import load_project
from jobbench.verdict.row_checks import FIGURE_RULES, judge_figure
from tests.unit.test_fix_branches import BENCHMARKS, sdk_112_text


@pytest.fixture(scope="module")
def pd() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "planted_defects", BENCHMARKS / "planted_defects.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_each_defect_is_in_1_12_0_once_and_its_file_compiles(pd: ModuleType) -> None:
    branches = [defect.branch for defect in pd.DEFECTS]
    assert len(set(branches)) == len(branches)
    for defect in pd.DEFECTS:
        text = sdk_112_text(defect.file)
        assert text.count(defect.old) == 1, defect.branch
        made = pd.planted(defect, text)
        assert made != text and defect.new in made, defect.branch
        compile(made, defect.file, "exec")  # a syntax error would show as a dead worker


def test_a_defect_whose_text_moved_is_refused(pd: ModuleType) -> None:
    defect = pd.DEFECTS[0]
    for text, times in (("nothing here\n", 0), (defect.old * 2, 2)):
        with pytest.raises(SystemExit, match=f"{times} times, not once"):
            pd.planted(defect, text)


def test_each_defect_wants_what_its_check_can_give(pd: ModuleType) -> None:
    for defect in pd.DEFECTS:
        if defect.check == pd.NONE:  # the comment-only commit: nothing to find
            assert defect.want == 0, defect.branch
        elif not defect.seen:  # a check the gate lacks: the gate passes it, and says so
            assert defect.want == 0 and "no such check" in defect.check, defect.branch
        else:
            assert defect.want in (0, 1), defect.branch
    # Every check has a defect it should be the one to find (the behaviour check: the state
    # fsynced to disk on every job, the workers' disk writes).
    kinds = {defect.check for defect in pd.DEFECTS if defect.seen}
    assert set(pd.CHECKS) == kinds


def test_every_suite_a_defect_names_is_in_the_project_it_writes(
    pd: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "jobbench.toml").write_text(pd.SUITES)
    project = load_project(tmp_path)
    for defect in pd.DEFECTS:
        assert defect.suite in project.suites, defect.branch
    (row,) = project.suites["job-done-500"].scenarios
    assert row.faults == ("job-done:500:0.05",) and row.workers == 2


def test_the_gates_words_name_its_checks(pd: ModuleType) -> None:
    """The overall line names a figure check by the reason row_checks.py writes, a speed
    regression by `slower in`, and correctness or behaviour by their reasons' prefixes."""
    for rule in FIGURE_RULES:
        finding = judge_figure([1.0] * 10, [3.0] * 10, rule, 0.01)
        assert finding is not None and finding.verdict == "regression"
        overall = f"overall: regression: broke in row ({finding.reason})"
        (check,) = pd.named(overall)
        assert pd.CHECKS[check] == rule.what
    trade = "overall: regression (a trade: faster in a; slower in b)"
    assert pd.named(trade) == ["time"]
    both = "overall: regression: broke in a (correctness: 3 of 64 jobs failed, baseline 0)"
    assert pd.named(both + "; slower in b") == ["correctness", "time"]
    assert pd.named("overall: pass: no scenario is slower than the threshold") == []


def test_the_summary_says_which_check_named_each_defect(pd: ModuleType) -> None:
    spin = next(d for d in pd.DEFECTS if d.branch == "spin-a-core")
    heartbeat = next(d for d in pd.DEFECTS if d.branch == "heartbeat-thread")
    said = "overall: regression: broke in 4w (behaviour: a worker kept a core busy in 10 of 10)"
    line = pd.summary_line(spin, 1, said, 95.0)
    assert "| CPU per job | 1 (1) | behaviour | 95 s |" in line
    assert pd.by_another_check([(spin, 1, said, 95.0)]) == [
        "spin-a-core: behaviour (wanted CPU per job)"
    ]
    passed = "overall: pass: no scenario is slower than the threshold"
    line = pd.summary_line(heartbeat, 0, passed, 300.0)
    assert f"| {heartbeat.check}: unseen | 0 (0) | - |" in line
    assert pd.by_another_check([(heartbeat, 0, passed, 300.0)]) == []
