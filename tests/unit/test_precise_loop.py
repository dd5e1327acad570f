"""fake_queue.precise_loop: young collections in idle time only, a wait shortened by the
collection it ran, and requests read in one loop turn stamped with that turn's wake-up."""

from __future__ import annotations

import asyncio
import gc
import select
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from fake_queue import precise_loop
from fake_queue.precise_loop import GC_THRESHOLDS, IdleCollector, wake_ns

pytestmark = pytest.mark.skipif(not precise_loop.EPOLL, reason="the precise loop needs epoll")


@pytest.fixture
def collection_off() -> Iterator[None]:
    """Automatic collection off, as `precise_loop.run(idle_collection=True)` leaves it; a clean
    count to start."""
    was = gc.isenabled()
    gc.disable()
    gc.collect()
    try:
        yield
    finally:
        if was:
            gc.enable()


def make_young(count: int) -> list[list[int]]:
    """`count` new GC-tracked objects, kept alive (the young generation's count grows)."""
    return [[i] for i in range(count)]


def test_young_objects_are_collected_when_the_wait_is_long(collection_off: None) -> None:
    collector = IdleCollector()
    kept = make_young(GC_THRESHOLDS[0] * 2)
    assert gc.get_count()[0] >= GC_THRESHOLDS[0]
    spent = collector.before_wait(None)  # no timer: idle until the next event
    assert gc.get_count()[0] < GC_THRESHOLDS[0]
    assert spent > 0
    assert collector.in_gen1 >= len(kept)  # the survivors moved on to generation 1


def test_no_collection_just_before_a_timer(collection_off: None) -> None:
    collector = IdleCollector()
    kept = make_young(GC_THRESHOLDS[0] * 2)
    young = gc.get_count()[0]
    assert young >= GC_THRESHOLDS[0]
    assert collector.before_wait(0.0) == 0.0  # a timer due now
    assert collector.before_wait(50e-6) == 0.0  # less room than the collection takes
    assert gc.get_count()[0] >= young
    assert collector.before_wait(1.0) > 0  # room enough: now it collects
    assert len(kept) == GC_THRESHOLDS[0] * 2


def test_a_loop_never_idle_collects_once_the_young_pile_up(collection_off: None) -> None:
    collector = IdleCollector()
    kept = make_young(GC_THRESHOLDS[0] * collector.FORCE_AFTER + 10)
    assert collector.before_wait(0.0) > 0  # forced, even with a timer due now
    assert gc.get_count()[0] < GC_THRESHOLDS[0]
    assert kept


def test_generation_1_is_collected_every_tenth_time_and_its_size_is_tracked(
    collection_off: None,
) -> None:
    collector = IdleCollector()
    kept: list[Any] = []
    for _ in range(GC_THRESHOLDS[1]):
        kept.append(make_young(GC_THRESHOLDS[0]))
        collector.before_wait(None)
    assert gc.get_count()[1] == GC_THRESHOLDS[1]  # ten collections of generation 0
    assert collector.in_gen1 >= GC_THRESHOLDS[0] * GC_THRESHOLDS[1]
    kept.append(make_young(GC_THRESHOLDS[0]))
    collector.before_wait(None)
    assert gc.get_count()[1] == 0  # this one was of generations 0 and 1
    assert collector.in_gen1 == 0


def test_automatic_collection_on_leaves_collection_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    collections: list[int] = []
    monkeypatch.setattr(gc, "get_count", lambda: (GC_THRESHOLDS[0] * 100, 0, 0))
    monkeypatch.setattr(gc, "collect", lambda generation=2: collections.append(generation) or 0)
    assert gc.isenabled()
    assert IdleCollector().before_wait(None) == 0.0
    assert collections == []
    gc.disable()
    try:
        assert IdleCollector().before_wait(None) > 0  # the same counts, collection off
    finally:
        gc.enable()
    assert collections == [0]


def test_run_turns_automatic_collection_off_while_it_runs_and_back_on() -> None:
    async def main() -> bool:
        return gc.isenabled()

    assert gc.isenabled()
    assert precise_loop.run(main(), idle_collection=True) is False  # the queue's
    assert gc.isenabled()
    assert precise_loop.run(main()) is True  # a worker's: automatic, as before


def test_the_wait_is_shortened_by_the_collection_it_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    def fake_select(r: Any, w: Any, x: Any, timeout: float) -> tuple[list[Any], ...]:
        waits.append(timeout)
        return [], [], []

    monkeypatch.setattr(select, "select", fake_select)
    monkeypatch.setattr(IdleCollector, "before_wait", lambda self, timeout: 0.004)
    selector = precise_loop.PreciseEpollSelector()
    try:
        selector.select(0.010)
    finally:
        selector.close()
    slack = max(0.006 / 1000, precise_loop.KERNEL_SLACK_MIN_S) + precise_loop.WAKE_UP_S
    assert waits == [pytest.approx(0.006 - slack)]  # 10 ms less the 4 ms collection


class Stamps(asyncio.Protocol):
    def __init__(self, loop: asyncio.AbstractEventLoop, into: list[tuple[int, int]]) -> None:
        self.loop, self.into = loop, into

    def data_received(self, data: bytes) -> None:
        self.into.append((wake_ns(self.loop), time.monotonic_ns()))


def test_requests_read_in_one_loop_turn_share_its_wake_up_stamp() -> None:
    loop = precise_loop.new_event_loop()
    stamps: list[tuple[int, int]] = []
    pairs = [socket.socketpair() for _ in range(3)]
    try:

        async def main() -> None:
            for ours, _ in pairs:
                await loop.connect_accepted_socket(lambda: Stamps(loop, stamps), ours)
            await asyncio.sleep(0.01)  # connected; the loop now waits
            for _, theirs in pairs:
                theirs.send(b"GET / HTTP/1.1\r\n\r\n")  # all three before the loop wakes
            await asyncio.sleep(0.05)

        loop.run_until_complete(main())
    finally:
        loop.close()
        for a, b in pairs:
            a.close()
            b.close()
    assert len(stamps) == 3
    assert len({stamp for stamp, _ in stamps}) == 1  # one stamp: the turn's wake-up
    assert all(stamp <= read for stamp, read in stamps)  # never after the read itself
    assert stamps[-1][1] > stamps[0][1]  # while the reads themselves came one after another


def test_the_stamp_elsewhere_is_now() -> None:
    loop = asyncio.SelectorEventLoop()
    try:
        before = time.monotonic_ns()
        assert wake_ns(loop) >= before
    finally:
        loop.close()
