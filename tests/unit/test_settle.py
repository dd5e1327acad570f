"""--reps auto: when a row stops adding pairs, and why (jobbench/core/settle.py)."""

from __future__ import annotations

import pytest

from jobbench.core.settle import Settler, parse_duration, parse_reps
from jobbench.errors import UsageError
from jobbench.results.decision import Rule
from tests.unit.test_compare_gate import entry, steady


class Said:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


def settler(rows: int = 1, max_reps: int = 30, budget_s: float = 1800.0) -> tuple[Settler, Said]:
    said = Said()
    return Settler(Rule(), lambda _: "time_to_p99_s", rows, 6, said, max_reps, budget_s), said


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
    assert settle.stop(pair, 8, 1.0, deadline) == "--max-reps 8 reached"
    assert settle.looks == {"shallow": 3}  # reps 6, (7), 8: the row's alpha at the end


def test_the_budget_is_shared_between_rows_and_a_spent_share_stops_the_row() -> None:
    settle, _ = settler(rows=4, budget_s=3600.0)
    first = settle.begin_row()
    second = settle.begin_row()
    assert first < second  # each later row gets an equal share of what is left
    noisy = [0.56, 0.60, 0.64, 0.58, 0.66, 0.61]
    pair = [entry("shallow", noisy), entry("shallow", [v * 1.03 for v in noisy])]
    reason = settle.stop(pair, 6, 5000.0, second)  # a pair longer than the share left
    assert reason == "its share of --budget 60 min was spent after 6 reps"


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
