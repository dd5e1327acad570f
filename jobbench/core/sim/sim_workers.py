"""The simulator's workers: model policies on the virtual-time loop, a fixed set of them, or an
autoscaled fleet's (fake_queue/queue/autoscaled_fleet.py), whose orders this executes as the fake
target's runner executes them with processes: a start order's worker boots (the executor reports its
start, then its process start-up passes) and polls; a stop order's is shut down (SIGTERM's part: no
more takes, held jobs still run and post) and reported stopped once its policy has ended."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial

from fake_queue.api import Fleet, Order
from jobbench.errors import RunFailed
from jobbench.workers.policies import SDK_112
from jobbench.workers.policy_base import Policy

# What a worker process takes from its start to its first take, in the simulator: a real
# process's start-up is measured (the fake target), the simulator's is this, by policy.
# The runpod SDK 1.12.0 imports in about 1.9 s (runpod-protocol.md section 5); the model worker
# imports no SDK (docs/fleet.md, "Cold starts", for both measured).
PROCESS_START_S = {SDK_112: 1.9}
MODEL_PROCESS_START_S = 0.2


def process_start_s(policy: str) -> float:
    return PROCESS_START_S.get(policy, MODEL_PROCESS_START_S)


class SimWorkers:
    """The rep's policies, each a task; `fleet`'s orders start and stop more of them."""

    def __init__(
        self, make: Callable[[str], Policy], fleet: Fleet | None, startup_s: float
    ) -> None:
        self.make = make
        self.fleet = fleet
        self.startup_s = startup_s
        self.policies: dict[str, Policy] = {}
        self.tasks: list[asyncio.Task[None]] = []
        self._rested = asyncio.Event()
        if fleet is not None:
            fleet.on_order = self._order

    def run(self, worker: str) -> None:
        """Start `worker`'s policy now."""
        policy = self.policies[worker] = self.make(worker)
        task = asyncio.create_task(policy.run())
        task.add_done_callback(partial(self._ended, worker))
        self.tasks.append(task)

    async def at_rest(self, give_up_s: float) -> None:
        """Until every worker the fleet added has stopped (at once for a fixed fleet)."""
        fleet = self.fleet
        if fleet is None or fleet.at_rest:
            return
        self._rested.clear()
        try:
            await asyncio.wait_for(self._rested.wait(), give_up_s)
        except TimeoutError:
            left = [m.id for m in fleet.members.values() if not m.active and m.state != "stopped"]
            raise RunFailed(
                f"simulation: every job ended, but workers {', '.join(left)} did not stop within "
                f"{give_up_s:g} virtual seconds (idle timeout {fleet.settings.idle_timeout_s:g} s)"
            ) from None

    async def shut_down(self) -> None:
        for policy in self.policies.values():
            policy.shutdown()
        await asyncio.gather(*self.tasks)

    def _order(self, order: Order) -> None:
        assert self.fleet is not None
        worker = str(order["worker"])
        if order["action"] == "stop":
            self.policies[worker].shutdown()
            return
        loop = asyncio.get_running_loop()
        delay_s = max(int(order["at"]) - self.fleet.queue.clock.now_ns(), 0) / 1e9
        loop.call_later(delay_s, self._boot, worker)

    def _boot(self, worker: str) -> None:
        assert self.fleet is not None
        self.fleet.started(worker)
        asyncio.get_running_loop().call_later(self.startup_s, self.run, worker)

    def _ended(self, worker: str, task: asyncio.Task[None]) -> None:
        if self.fleet is None:
            return
        failed = not task.cancelled() and task.exception() is not None
        self.fleet.exited(worker, 1 if failed else 0)
        if self.fleet.at_rest:
            self._rested.set()
