"""Lanes: rows side by side in threads of their own, and how they stop (core/run/lanes.py,
procs/lane_stop.py). Real threads; each "row" here is a function that waits as a rep does."""

from __future__ import annotations

import _thread
import threading
import time

import pytest

from jobbench.core.run.lanes import (
    LANES_MAX_BUSY,
    Lanes,
    crowded,
    lanes_for,
    parse_lanes,
    run_rows,
)
from jobbench.core.run.settle import Settler
from jobbench.errors import RunFailed, UsageError
from jobbench.procs import lane_stop
from jobbench.verdict.gate import GateConfig
from tests.unit.test_settle import Said


def test_lanes_parse_and_resolve() -> None:
    assert parse_lanes("auto") == "auto" and parse_lanes(" 3 ") == 3
    for bad, said in (
        ("0", "--lanes 0: must be a whole number >= 1, or auto"),
        ("two", "--lanes 'two': write a whole number, e.g. 1, or auto"),
    ):
        with pytest.raises(UsageError) as raised:
            parse_lanes(bad)
        assert str(raised.value) == said
    assert lanes_for("auto", 5, room=5) == 5
    assert lanes_for(2, 5, room=5) == 2 and lanes_for(9, 5, room=5) == 5
    assert lanes_for("auto", 5, room=1) == 1  # a --server, the simulator, live
    assert lanes_for("auto", 5, room=3) == lanes_for(4, 5, room=3) == 3  # a cluster's CPUs


def test_rows_overlap_and_each_runs_once() -> None:
    ran: list[int] = []
    inside = threading.Barrier(3, timeout=5)  # all three rows in at once, or this times out

    def row(index: int) -> None:
        inside.wait()
        ran.append(index)

    run_rows(3, row, Lanes(3))
    assert sorted(ran) == [0, 1, 2]


def test_one_lane_runs_the_rows_in_order_in_this_thread() -> None:
    seen: list[tuple[int, bool]] = []
    run_rows(3, lambda i: seen.append((i, threading.current_thread() is threading.main_thread())),
             Lanes(1))  # fmt: skip
    assert seen == [(0, True), (1, True), (2, True)]


def test_a_failed_row_stops_the_others_at_their_next_wait_and_is_the_error() -> None:
    stopped: list[int] = []

    def row(index: int) -> None:
        if index == 1:
            time.sleep(0.1)
            raise RunFailed("row 1's worker died")
        try:
            while True:
                lane_stop.pause(0.05)  # a rep's wait
        except lane_stop.LaneStopped:
            stopped.append(index)
            raise

    with pytest.raises(RunFailed, match="row 1's worker died") as raised:
        run_rows(3, row, Lanes(3))  # the other rows' waits never end unless they are stopped
    assert not isinstance(raised.value, lane_stop.LaneStopped)
    assert sorted(stopped) == [0, 2]


def test_ctrl_c_in_the_main_thread_stops_every_lane_and_is_raised_after_their_clean_up() -> None:
    cleaned: list[int] = []
    waiting = threading.Barrier(4, timeout=60)  # the three rows and the Ctrl-C

    def row(index: int) -> None:
        try:
            waiting.wait()
            while True:
                lane_stop.pause(0.05)
        finally:
            time.sleep(0.2)  # a clean-up that takes a while: the main thread waits for it
            cleaned.append(index)

    def interrupt_soon() -> None:
        waiting.wait()  # every row is in its lane: the main thread waits on them
        _thread.interrupt_main()  # KeyboardInterrupt in the main thread, as Ctrl-C

    threading.Thread(target=interrupt_soon, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        run_rows(3, row, Lanes(3))
    assert sorted(cleaned) == [0, 1, 2]


def test_pause_outside_a_lane_is_a_sleep_and_a_lane_is_unbound_after() -> None:
    lane_stop.pause(0.0)  # the main thread: no stop flag, nothing raised
    flags: list[bool] = []
    run_rows(2, lambda _: flags.append(threading.current_thread() is threading.main_thread()),
             Lanes(2))  # fmt: skip
    assert flags == [False, False]
    lane_stop.check()  # still nothing bound here


def test_a_pair_waits_for_a_place_once_lanes_are_off() -> None:
    said = Said()
    lanes = Lanes(3, said)
    assert lanes.capacity == 3
    lanes.observe({"machine": {"cpu_busy": 0.2}})  # quiet: lanes stay on
    assert lanes.off is None
    lanes.observe({"machine": {"cpu_busy": LANES_MAX_BUSY + 0.1}})
    assert lanes.capacity == 1 and said.lines[0].startswith("lanes off: the machine was 60% busy")
    lanes.observe({"anomalies": [{"kind": "saturated", "what": "the queue used 0.95"}]})
    assert len(said.lines) == 1  # said once
    most = [0]
    now = [0]
    lock = threading.Lock()

    def row(_: int) -> None:
        for _pair in range(3):
            with lanes.pair():
                with lock:
                    now[0] += 1
                    most[0] = max(most[0], now[0])
                time.sleep(0.01)
                with lock:
                    now[0] -= 1

    run_rows(3, row, lanes)
    assert most == [1]  # one pair at a time, whichever lane


def test_a_saturated_rep_or_a_busy_machine_is_crowded() -> None:
    assert crowded({"anomalies": [{"kind": "stall", "what": "w1"}]}) is None  # the worker's own
    assert crowded({"anomalies": [{"kind": "saturated", "what": "q"}]}) == (
        "the harness was saturated (q)"
    )
    assert crowded({"machine": {"cpu_busy": None}}) is None


def test_the_budget_a_row_gets_with_lanes_is_a_turns_share() -> None:
    started = time.monotonic()

    def settler() -> Settler:
        return Settler(GateConfig(), lambda _: None, rows=4, costed=0, first_reps=5,
                       messages=Said(), budget_s=3600.0, started=started)  # fmt: skip

    alone, lanes = settler(), settler()
    now = time.monotonic()
    one = alone.begin_row(1) - now  # a quarter of what is left of the hour
    four = lanes.begin_row(4) - now  # all four rows at once: the whole of it
    assert four == pytest.approx(4 * one, rel=1e-3)
    two = settler()
    assert two.begin_row(2) - now == pytest.approx(2 * one, rel=1e-3)  # two turns of two


def test_no_rep_runs_while_a_row_starts_and_a_start_waits_for_the_reps_under_way() -> None:
    """A row that starts while others run (a later wave): threads of their own here."""
    lanes = Lanes(2)
    seen: list[str] = []
    in_pair = threading.Event()
    in_start = threading.Event()

    def running() -> None:
        with lanes.pair():
            seen.append("pair begins")
            in_pair.set()
            time.sleep(0.3)
            seen.append("pair ends")
        in_start.wait(5)
        with lanes.pair():  # waits for the other row's start to end
            seen.append("second pair")

    def starting() -> None:
        in_pair.wait(5)
        with lanes.starting():  # waits for the pair under way
            seen.append("start begins")
            in_start.set()
            time.sleep(0.3)
            seen.append("start ends")

    threads = [threading.Thread(target=running), threading.Thread(target=starting)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == ["pair begins", "pair ends", "start begins", "start ends", "second pair"]


def test_the_rows_that_begin_together_all_start_before_any_rep() -> None:
    lanes = Lanes(2)
    seen: list[str] = []

    def row(index: int) -> None:
        time.sleep(0.3 * index)  # the second row's thread comes late to its start
        with lanes.starting():
            seen.append(f"start {index}")
        with lanes.pair():
            seen.append(f"pair {index}")

    run_rows(2, row, lanes)
    assert seen[:2] == ["start 0", "start 1"] and sorted(seen[2:]) == ["pair 0", "pair 1"]
