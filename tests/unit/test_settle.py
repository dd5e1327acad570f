"""--reps auto: when a row stops adding pairs, and why (jobbench/core/run/settle.py)."""

from __future__ import annotations

from itertools import islice

import pytest

from jobbench.core.run.settle import Settler, parse_duration, parse_reps
from jobbench.errors import UsageError
from jobbench.results.model import ScenarioResult
from jobbench.verdict.comparison import compare_docs
from jobbench.verdict.decision import (
    CHECKS_SHARE,
    Rule,
    is_look_point,
    look_levels,
    look_number,
    look_points,
)
from jobbench.verdict.gate import GateConfig, judge
from tests.unit.test_compare_gate import entry, fleet_doc, steady


class Said:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


def settler(
    rows: int = 1,
    max_reps: int = 30,
    budget_s: float = 1800.0,
    gate: GateConfig | None = None,
    costed: int = 0,
    first_reps: int = 6,
) -> tuple[Settler, Said]:
    said = Said()
    settle = Settler(
        gate or GateConfig(),
        lambda _: "time_to_p99_s",
        rows=rows,
        costed=costed,
        first_reps=first_reps,
        messages=said,
        max_reps=max_reps,
        budget_s=budget_s,
    )
    return settle, said


def fleet_pair(
    p99s: tuple[list[float], list[float]], worker_s: tuple[list[float], list[float]]
) -> list[ScenarioResult]:
    """A and B of one autoscaled row: its latency and its cost (worker-seconds) per rep."""
    return [fleet_doc(k, p, w).scenarios[0] for k, p, w in zip("ab", p99s, worker_s)]


def test_a_clear_row_settles_at_once_and_says_so() -> None:
    settle, said = settler()
    deadline = settle.begin_row()
    pair = [entry("deep", steady(10.0, 6)), entry("deep", steady(12.0, 6))]
    assert settle.stop(pair, 6, 1.0, deadline) == "settled (regression) after 6 reps a side"
    assert settle.stopped == {"deep": "settled (regression) after 6 reps a side"}
    assert settle.looks == {"deep": 1} and said.lines == []


def test_an_open_row_asks_for_a_pair_until_max_reps() -> None:
    settle, said = settler(max_reps=8)
    deadline = settle.begin_row()
    noisy = [0.56, 0.60, 0.64, 0.58, 0.66, 0.61]
    pair = [entry("shallow", noisy), entry("shallow", [v * 1.03 for v in noisy])]
    assert settle.stop(pair, 6, 1.0, deadline) is None
    assert "shallow: unsettled after 6 reps a side" in said.lines[0]
    assert said.lines[0].endswith("next test at 8 reps")
    assert settle.stop(pair, 7, 1.0, deadline) is None  # between two points: no test
    assert len(said.lines) == 1 and settle.looks == {"shallow": 1}
    assert settle.stop(pair, 8, 1.0, deadline) == "--max-reps 8 reached"
    assert settle.looks == {"shallow": 2}  # tests at 6 and 8: the row's alpha at the end


def test_a_row_stopped_between_two_points_is_judged_at_the_next_points_level() -> None:
    settle, _ = settler(max_reps=9)
    deadline = settle.begin_row()
    noisy = [0.56, 0.60, 0.64, 0.58, 0.66, 0.61, 0.59, 0.63, 0.57]
    pair = [entry("shallow", noisy), entry("shallow", [v * 1.03 for v in noisy])]
    assert settle.stop(pair, 9, 1.0, deadline) == "--max-reps 9 reached"
    assert settle.looks == {"shallow": 3}  # points 6, 8, 11: 9 is tested as the third


def test_the_schedule_of_tests_grows_geometrically() -> None:
    assert list(islice(look_points(5), 8)) == [5, 7, 10, 13, 17, 23, 30, 39]
    assert list(islice(look_points(1), 4)) == [1, 3, 5, 7]  # at least two pairs apart
    assert [look_number(r, 5) for r in (5, 6, 7, 8, 10, 11, 30)] == [1, 2, 2, 3, 3, 4, 7]
    assert [r for r in range(1, 31) if is_look_point(r, 5)] == [5, 7, 10, 13, 17, 23, 30]
    # seven tests up to 30 reps: the last one's level is share / 56, not share / 702
    assert look_levels(Rule(), 7, rows=1, costed=0).alpha == pytest.approx(0.008 / 56)


def test_the_budget_is_shared_between_rows_and_a_spent_share_stops_the_row() -> None:
    settle, _ = settler(rows=4, budget_s=3600.0)
    first = settle.begin_row()
    second = settle.begin_row()
    assert first < second  # each later row gets an equal share of what is left
    noisy = [0.56, 0.60, 0.64, 0.58, 0.66, 0.61]
    pair = [entry("shallow", noisy), entry("shallow", [v * 1.03 for v in noisy])]
    reason = settle.stop(pair, 6, 5000.0, second)  # a pair longer than the share left
    assert reason == "its share of --budget 60 min was spent after 6 reps"


def test_a_costed_row_is_settled_on_its_latency_and_its_cost() -> None:
    cost_gate = GateConfig(max_cost_regression=0.10)
    same = steady(10.0, 6)
    noisy = [100.0, 108.0, 93.0, 104.0, 96.0, 110.0]
    dearer = [v * 1.08 for v in reversed(noisy)]  # +8 % in noise of +-6 %: neither way yet
    pair = fleet_pair((same, same), (noisy, dearer))
    # judged on latency alone, the row passes at once...
    latency_only, _ = settler()
    assert latency_only.stop(pair, 6, 1.0, latency_only.begin_row()) == (
        "settled (pass) after 6 reps a side"
    )
    # ...but the gate will judge its cost too: it stays open for that
    settle, said = settler(gate=cost_gate, costed=1)
    deadline = settle.begin_row()
    assert settle.stop(pair, 6, 1.0, deadline) is None
    assert "below +5%" in said.lines[0] and "; cost: +" in said.lines[0]
    # at the next test (8 reps, two pairs later) the cost is clear (+20 %): the row stops
    clear = fleet_pair((steady(10.0, 8), steady(10.0, 8)), (steady(100.0, 8), steady(120.0, 8)))
    assert settle.stop(clear, 7, 1.0, deadline) is None
    assert settle.stop(clear, 8, 1.0, deadline) == "settled (regression) after 8 reps a side"


def test_a_regression_in_either_settles_a_costed_row() -> None:
    """The row fails whatever the other test would say: more pairs would only spend budget."""
    settle, _ = settler(gate=GateConfig(max_cost_regression=0.10), costed=1)
    noisy = [100.0, 108.0, 93.0, 104.0, 96.0, 110.0]
    pair = fleet_pair((steady(10.0, 6), steady(12.0, 6)), (noisy, list(reversed(noisy))))
    assert (
        settle.stop(pair, 6, 1.0, settle.begin_row()) == "settled (regression) after 6 reps a side"
    )


def test_settling_and_the_verdict_hold_a_row_to_one_level_cost_tests_included() -> None:
    """A costed row is two tests of the call's speed share (0.8 % of its 1 %: the checks of
    correctness and behaviour keep the rest): 1 / 252, the smallest p of 5 reps a side, is
    under a lone row's first look (0.8 % / 2) but not under its half of it (0.8 % / 2 / 2)."""
    a, b = (fleet_doc(k, steady(p99, 5), steady(100.0, 5)) for k, p99 in (("a", 10.0), ("b", 12.0)))
    cases = (
        (GateConfig(), 0, "regression"),
        (GateConfig(max_cost_regression=0.1), 1, "inconclusive"),
    )
    for gate, costed, verdict in cases:
        settle, _ = settler(gate=gate, costed=costed, first_reps=5)
        stopped = settle.stop([a.scenarios[0], b.scenarios[0]], 5, 1.0, settle.begin_row())
        comparison = compare_docs(a, b, stops=settle.settled())
        judge(comparison, gate)
        assert comparison.rows[0].verdict == verdict
        speed = 0.01 * (1 - CHECKS_SHARE)
        assert comparison.rows[0].alpha == pytest.approx(speed / (1 + costed) / 2)
        assert (stopped is None) == (verdict == "inconclusive")  # an open row gets a pair


@pytest.mark.parametrize(("text", "value"), [("auto", "auto"), ("AUTO", "auto"), ("7", 7)])
def test_parse_reps(text: str, value: int | str) -> None:
    assert parse_reps(text) == value


@pytest.mark.parametrize("text", ["0", "-2", "many", "2.5"])
def test_bad_reps_name_the_flag(text: str) -> None:
    with pytest.raises(UsageError, match="--reps"):
        parse_reps(text)


@pytest.mark.parametrize(
    ("text", "seconds"), [("30m", 1800.0), ("1h", 3600.0), ("90s", 90.0), ("45", 45.0)]
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["0", "soon", "-5m", "10d"])
def test_bad_durations_name_the_flag(text: str) -> None:
    with pytest.raises(UsageError, match="--budget"):
        parse_duration(text)


def test_a_row_settled_as_a_regression_stops_the_rows_still_adding_pairs() -> None:
    settle, said = settler(rows=2)
    deadline = settle.begin_row()
    noisy = [0.56, 0.60, 0.64, 0.58, 0.66, 0.61]
    open_pair = [entry("shallow", noisy), entry("shallow", [v * 1.03 for v in noisy])]
    assert settle.stop(open_pair, 6, 1.0, deadline) is None  # unsettled: one more pair
    slower = [entry("deep", steady(10.0, 6)), entry("deep", steady(12.0, 6))]
    assert settle.stop(slower, 6, 1.0, deadline) == "settled (regression) after 6 reps a side"
    assert settle.regressed == "deep"
    # Between two tests it would have run on; the call is a regression already.
    reason = settle.stop(open_pair, 7, 1.0, deadline)
    assert reason == "deep settled the call as a regression after 7 reps a side"
    assert settle.stopped["shallow"] == reason and settle.looks["shallow"] == 2
    assert len(said.lines) == 1  # only the first test's "unsettled" line
