"""The suite's readers-writer lock across xdist workers (tests/machine_share.py): a quiet test
waits for the tests running beside it and runs with none; no test enters while it waits."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path

from tests.machine_share import MachineShare


def wait_until_held(lock: Path) -> None:
    """Until some holder has `lock` (a try to take it fails), however slow the thread to get it."""
    with lock.open("a") as probe:
        while True:
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return
            fcntl.flock(probe, fcntl.LOCK_UN)
            time.sleep(0.01)


def test_a_quiet_test_waits_for_those_inside_and_no_new_test_enters_meanwhile(
    tmp_path: Path,
) -> None:
    share = MachineShare(tmp_path)  # each open of the lock files is a holder of its own
    order: list[str] = []
    inside = threading.Event()
    leave = threading.Event()

    def running_test() -> None:
        with share.shared():
            order.append("first in")
            inside.set()
            leave.wait(5)
            order.append("first out")

    def quiet_test() -> None:
        with share.alone():
            order.append("quiet in")
            time.sleep(0.1)
            order.append("quiet out")

    def late_test() -> None:
        with share.shared():
            order.append("late in")

    first = threading.Thread(target=running_test)
    first.start()
    inside.wait(5)
    quiet = threading.Thread(target=quiet_test)
    quiet.start()
    wait_until_held(tmp_path / "door.lock")  # the quiet test holds the door, waits for the room
    late = threading.Thread(target=late_test)
    late.start()
    time.sleep(0.2)
    assert order == ["first in"]  # neither the quiet test nor the late one got in
    leave.set()
    for thread in (first, quiet, late):
        thread.join(5)
    assert order == ["first in", "first out", "quiet in", "quiet out", "late in"]


def test_tests_beside_each_other_share_the_room(tmp_path: Path) -> None:
    share = MachineShare(tmp_path)
    with share.shared(), share.shared():  # a second holder gets in at once
        pass


def test_without_xdist_nothing_is_locked() -> None:
    share = MachineShare(None)
    with share.alone(), share.alone(), share.shared():
        pass


def test_a_row_of_quiet_tests_keeps_the_machine_until_the_last_one_releases_it(
    tmp_path: Path,
) -> None:
    share, other_worker = MachineShare(tmp_path), MachineShare(tmp_path)
    entered = threading.Event()

    def another_test() -> None:
        with other_worker.shared():
            entered.set()

    share.keep_alone()
    with share.alone(), share.alone():  # two quiet tests of the row: kept, not taken again
        pass
    waiting = threading.Thread(target=another_test)
    waiting.start()
    assert not entered.wait(0.3)  # the machine is still kept between them
    share.release()
    assert entered.wait(5)
    waiting.join(5)
