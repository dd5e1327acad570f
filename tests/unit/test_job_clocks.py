"""The model worker's clocks: a batch's sleeps share one timer (bench_handler.sleep_until), a
job's time runs from its take's answer's arrival, and a slow take's answer is waited for
awake (http_link.AnswerClock, precise_loop.awake_around)."""

from __future__ import annotations

import asyncio
import select
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest

from fake_queue import precise_loop
from fake_queue.queue import virtual_clock
from jobbench.workers import bench_handler as bench_handler_module
from jobbench.workers import http_link
from jobbench.workers.bench_handler import bench_handler, sleep_until
from jobbench.workers.policy_base import Job, post_each
from jobbench.workers.policy_drain import DrainPolicy, TakeAheadPolicy
from tests.task_runs import HandlerTasks


def test_sleeps_ending_at_one_instant_share_one_timer_and_cancel_alone() -> None:
    async def main() -> tuple[int, list[float], bool]:
        loop = asyncio.get_running_loop()
        timers = 0
        call_at = loop.call_at

        def counting_call_at(when: float, callback: Any, *args: Any, **kw: Any) -> Any:
            nonlocal timers
            timers += callback is bench_handler_module._wake
            return call_at(when, callback, *args, **kw)

        loop.call_at = counting_call_at  # type: ignore[method-assign]
        end = loop.time() + 0.05
        woke: list[float] = []

        async def sleeper(when: float) -> None:
            await sleep_until(loop, when)
            woke.append(loop.time() - when)

        tasks = [asyncio.create_task(sleeper(end)) for _ in range(3)]
        later = asyncio.create_task(sleeper(end + 0.01))
        await asyncio.sleep(0.01)
        tasks[0].cancel()  # a stopped job: the others sleep on
        await asyncio.gather(*tasks[1:], later)
        return timers, woke, tasks[0].cancelled()

    timers, woke, cancelled = asyncio.run(main())
    assert timers == 2  # one for the three ending together, one for the later one
    assert len(woke) == 3 and all(late >= 0 for late in woke) and cancelled


def test_a_job_ends_its_seconds_after_it_started_not_after_it_first_ran() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time() - 0.05  # it got its slot 50 ms ago
        await bench_handler({"id": "j", "input": {"seconds": 0.08}}, started)
        return loop.time() - started

    assert 0.08 <= asyncio.run(main()) < 0.1


class ArrivedLink(HandlerTasks):
    """Answers one take with jobs whose answer arrived `early_s` before it was handed over."""

    stop_enabled = False

    def __init__(self, jobs: list[Job], early_s: float) -> None:
        self.answers = deque([jobs])
        self.early_s = early_s
        self.answer_arrived: float | None = None
        self.ended: list[float] = []
        self.accepted_at = 0.0

    async def take(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job]:
        if on_sent is not None:
            on_sent()
        if not self.answers:
            await asyncio.Event().wait()
        loop = asyncio.get_running_loop()
        self.accepted_at = loop.time()
        self.answer_arrived = self.accepted_at - self.early_s
        return self.answers.popleft()

    async def stops(self) -> list[str]:
        return []

    async def process(self, job: Job) -> None:
        await self.post_done(str(job["id"]), await self.handle(job))

    async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
        output = await bench_handler(job, started)
        self.ended.append(asyncio.get_running_loop().time())
        return {"output": output}

    async def post_done(self, job_id: str, result: dict[str, Any]) -> None:
        pass

    async def post_done_many(self, results: list[tuple[str, dict[str, Any]]]) -> None:
        await post_each(self, results)


def test_jobs_a_take_put_in_free_slots_run_from_the_answers_arrival() -> None:
    link = ArrivedLink([{"id": f"j{i}", "input": {"seconds": 0.1}} for i in range(2)], 0.04)

    async def main() -> None:
        policy = DrainPolicy(link, 4)
        running = asyncio.create_task(policy.run())
        await asyncio.sleep(0.2)
        policy.shutdown()
        await asyncio.wait_for(running, 5)

    asyncio.run(main())
    assert len(link.ended) == 2
    for ended in link.ended:  # 0.1 s after the arrival, 40 ms before the hand-over
        assert 0.1 <= ended - (link.accepted_at - 0.04) < 0.1 + 0.02


def test_a_slow_take_is_waited_for_awake_from_the_last_one_of_its_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    armed: list[float] = []

    def fake_awake(loop: asyncio.AbstractEventLoop, when: float) -> Callable[[], None]:
        armed.append(when - loop.time())
        return lambda: None

    monkeypatch.setattr(precise_loop, "awake_around", fake_awake)
    clock = http_link.AnswerClock()

    async def take(count: int, seconds: float) -> None:
        with clock.awake(count):
            await asyncio.sleep(seconds)

    async def main() -> None:
        await take(32, 0.06)  # the first of its size: nothing to go by
        await take(32, 0.06)  # armed ~0.06 s ahead
        await take(8, 0.06)  # another size: its own history
        await take(4, 0.01)
        await take(4, 0.01)  # too quick to be worth polling for

    virtual_clock.run(main())  # the sleeps last what they say, however busy the machine
    assert armed == [pytest.approx(0.06)]


@pytest.mark.skipif(not precise_loop.EPOLL, reason="the precise loop needs epoll")
def test_the_precise_loop_polls_around_an_awaited_instant(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[tuple[float, float]] = []  # (loop time, the select timeout it slept)
    real_select = select.select
    loop = precise_loop.new_event_loop()

    def recording_select(r: Any, w: Any, x: Any, timeout: float) -> Any:
        waits.append((loop.time(), timeout))
        return real_select(r, w, x, timeout)

    async def main() -> tuple[float, Callable[[], None]]:
        when = loop.time() + 0.02
        stop = precise_loop.awake_around(loop, when)
        await asyncio.sleep(0.04)
        return when, stop

    monkeypatch.setattr(select, "select", recording_select)
    try:
        when, stop = loop.run_until_complete(main())
        stop()
    finally:
        loop.close()
    # sleeps end before the window: inside it the loop only polls (no sleeping select)
    window = (when - precise_loop.WAKE_UP_S, when + precise_loop.WAKE_UP_S)
    for at, timeout in waits:
        assert not (window[0] < at < window[1]), (at - when, timeout)
        assert at + timeout <= window[0] + 1e-4 or at >= window[1]


class TimelineLink(ArrivedLink):
    """Logs each take as it goes on the wire and each job as its handler begins."""

    def __init__(self, answers: list[list[Job]]) -> None:
        super().__init__([], 0.0)
        self.answers = deque(answers)
        self.timeline: list[str] = []
        self.on_answer: Callable[[], None] | None = None

    async def take(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job]:
        self.timeline.append(f"take {count}")
        if self.answers and self.on_answer is not None:
            asyncio.get_running_loop().call_soon(self.on_answer)
        return await super().take(count, in_progress, on_sent)

    async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
        self.timeline.append(f"start {job['id']}")
        return await super().handle(job, started)


def run_policy(policy: DrainPolicy, seconds: float) -> None:
    async def main() -> None:
        running = asyncio.create_task(policy.run())
        await asyncio.sleep(seconds)
        policy.shutdown()
        await asyncio.wait_for(running, 5)

    asyncio.run(main())


def test_a_take_ahead_made_due_goes_out_before_the_batch_starts() -> None:
    batch = [{"id": f"j{i}", "input": {"seconds": 0.05}} for i in range(4)]
    link = TimelineLink([batch])
    run_policy(TakeAheadPolicy(link, 4, take_ahead=2), 0.1)
    # the full batch makes the take-ahead due: it is written before any job's task runs
    assert link.timeline[:3] == ["take 4", "take 2", "start j0"]
    assert sorted(e for e in link.timeline if e.startswith("start")) == [
        f"start j{i}" for i in range(4)
    ]


def test_a_job_stopped_before_its_task_began_never_runs() -> None:
    batch = [{"id": f"j{i}", "input": {"seconds": 0.02}} for i in range(3)]
    link = TimelineLink([batch])
    policy = DrainPolicy(link, 4)
    link.on_answer = lambda: policy.stop_job("j1")  # in the loop turn before the tasks start
    run_policy(policy, 0.1)
    assert "start j1" not in link.timeline and len(link.ended) == 2
    assert policy.free() == 4 and not policy.job_ids()
