"""The runner's rules for a refresh (core/real_workers/refresh_drive.py), on stand-ins for the
queue's view and the worker processes: stop once it holds nothing, a fresh process in the same place
after the exit, which exits count (after the stop, or rc 0 by itself) and which are deaths, what is
not watched meanwhile, and what a fleet's own stop or the rep's end changes. The real thing, with
real SDK workers and a real queue: tests/e2e/test_refresh.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from jobbench.core.real_workers import refresh_drive
from jobbench.core.real_workers.refresh_drive import Refreshes
from jobbench.errors import WorkerError

SENT: list[tuple[int, int]] = []  # (pgid, signal) sent to a stand-in's group, in order


@dataclass
class Process:
    """What Refreshes uses of a worker (procs/worker_handle.py `Worker`)."""

    worker_id: str
    log_path: Path
    cwd: Path | None = None
    code: int | None = None
    pgid: int | None = 4242
    stopped: bool = False

    def returncode(self) -> int | None:
        return self.code

    def stop(self, grace_s: float = 3.0) -> None:
        self.stopped = True
        if self.code is None:
            self.code = -9

    def check_alive(self) -> None:
        if self.code is not None:
            raise WorkerError(self.worker_id, self.code, "", "died")

    def signal(self, sig: int) -> None:
        assert self.pgid is not None
        SENT.append((self.pgid, sig))


@dataclass
class Queue:
    """The bench client: the view it answers, and what the runner told it."""

    view: dict[str, dict[str, Any]] = field(default_factory=dict)
    released: list[str] = field(default_factory=list)
    reports: list[tuple[str, int | None]] = field(default_factory=list)  # `refreshed` calls

    def workers(self) -> dict[str, dict[str, Any]]:
        return self.view

    def release(self, worker: str | None = None) -> int:
        self.released.append(str(worker))
        return 1

    def refreshed(self, worker: str, rc: int | None) -> None:
        self.reports.append((worker, rc))
        self.view[worker].pop("refresh", None)


def seen(
    held: int = 0, refresh: str | None = None, polling: int = 0, work: int = 1
) -> dict[str, Any]:
    view: dict[str, Any] = {"held": held, "polling": polling, "last_work_ns": work}
    if refresh is not None:
        view["refresh"] = refresh
    return view


@pytest.fixture
def signals() -> list[tuple[int, int]]:
    SENT.clear()
    return SENT


def fleet_of(tmp_path: Path, *ids: str) -> tuple[Queue, list[Any], Refreshes]:
    queue = Queue()
    fleet: list[Any] = []
    for worker in ids:
        (tmp_path / f"{worker}.log").write_text(f"{worker}'s first life\n")
        (tmp_path / worker).mkdir()
        fleet.append(Process(worker, tmp_path / f"{worker}.log", tmp_path / worker))
        queue.view[worker] = seen()

    def spawn(into: list[Any], names: list[str]) -> None:
        for name in names:
            (tmp_path / name).mkdir(exist_ok=True)
            into.append(Process(name, tmp_path / f"{name}.log", tmp_path / name, pgid=7))

    return queue, fleet, Refreshes(queue, [fleet], spawn)  # type: ignore[arg-type]


def test_a_worker_is_stopped_once_it_holds_nothing_and_replaced_in_its_place(
    tmp_path: Path, signals: list[tuple[int, int]]
) -> None:
    queue, fleet, refreshes = fleet_of(tmp_path, "w0", "w1", "w2")
    old = fleet[1]
    (old.cwd / "state").write_text("the old container's")
    queue.view["w1"] = seen(held=2, refresh="job-3", polling=1)
    assert refreshes.look(queue.view, 1.0) == [] and not signals  # its jobs run on
    assert refreshes.unwatched == set()  # it polls (its takes wait): watched as ever
    queue.view["w1"] = seen(held=0, refresh="job-3", polling=1)
    assert refreshes.look(queue.view, 1.5) == []
    assert [sig for _, sig in signals] == [15, 18] and queue.released == ["w1"]
    assert refreshes.unwatched == {"w1"}
    assert refreshes.expects_exit("w1", -15)  # after the stop, any exit is the refresh's
    old.code = -15
    queue.view["w1"] = seen(refresh="job-3")  # its take was answered as it was stopped
    (line,) = refreshes.look(queue.view, 2.0)
    assert "worker w1 refreshed (its job job-3 asked" in line and "exit code -15" in line
    assert queue.reports == [("w1", -15)] and old.stopped
    assert [p.worker_id for p in fleet] == ["w0", "w1", "w2"] and fleet[1] is not old
    assert (tmp_path / "w1.1.log").read_text() == "w1's first life\n"  # kept beside
    assert not (tmp_path / "w1" / "state").exists()  # a new container's folder
    assert refreshes.unwatched == {"w1"} and refreshes.fresh == {"w1"}  # until it polls
    refreshes.look(queue.view, 2.5)
    assert refreshes.unwatched == {"w1"}
    queue.view["w1"] = seen(polling=1)  # the fresh one's first take
    refreshes.look(queue.view, 3.0)
    assert refreshes.unwatched == set() and refreshes.restarts == 1


def test_an_exit_by_itself_counts_only_with_rc_0_even_before_the_runner_saw_the_ask(
    tmp_path: Path, signals: list[tuple[int, int]]
) -> None:
    queue, fleet, refreshes = fleet_of(tmp_path, "w0", "w1")
    queue.view["w0"] = seen(held=1, refresh="job-1")
    fleet[0].code = 0  # the SDK with the config key: exits once its jobs are posted
    assert refreshes.expects_exit("w0", 0)  # asks the queue: the exit came first
    assert not refreshes.expects_exit("w1", 0)  # no refresh asked: a death
    refreshes.look(queue.view, 1.0)
    assert queue.reports == [("w0", 0)] and not signals
    queue.view["w1"] = seen(refresh="job-2", held=1)
    fleet[1].code = 3  # died before it was stopped: its owner reports a death
    assert not refreshes.expects_exit("w1", 3)
    refreshes.look(queue.view, 1.5)
    with pytest.raises(WorkerError, match="worker w1 died"):
        refreshes.check_alive(fleet)
    assert refreshes.look(queue.view, 2.0) == []  # not restarted, now or later
    assert refreshes.pending["w1"].died and "w1" not in refreshes.unwatched
    assert queue.reports == [("w0", 0)] and fleet[1].code == 3


def test_the_reps_end_stops_it_whatever_it_holds_and_a_fleets_stop_wins(
    tmp_path: Path, signals: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    queue, fleet, refreshes = fleet_of(tmp_path, "w0", "w1")
    queue.view["w1"] = seen(held=0, refresh="job-2")
    refreshes.look(queue.view, 1.0, yields={"w1"})  # the fleet scales w1 down: no fresh one
    assert not refreshes.pending and queue.released == []
    fleet.pop()  # stopped by the fleet: gone from its owner's list once the rep is over
    queue.view["w0"] = seen(held=1, refresh="job-1")  # asked on the rep's last job, unseen

    def exits(seconds: float) -> None:
        fleet[0].code = 0 if queue.released else None

    monkeypatch.setattr(refresh_drive.time, "sleep", exits)
    (line,) = refreshes.settle()  # between reps: a job it lost was counted in the rep
    assert "worker w0 refreshed" in line and queue.released == ["w0"]
    assert refreshes.booting == {} and refreshes.fresh == {"w0"}  # the owner waits for it
