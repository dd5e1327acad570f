"""CPU placement: the embedded queue alone on one CPU, workers (and what they fork) elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from jobbench.procs.cpu_plan import pin, plan_cpus

# Prints its CPUs, then forks a child (as the SDK forks its heartbeat) that prints its own.
FORKS_LATER = (
    "import json, os, sys, time\n"
    "time.sleep(0.5)\n"
    "print(json.dumps(sorted(os.sched_getaffinity(0))), flush=True)\n"
    "if os.fork() == 0:\n"
    "    print(json.dumps(sorted(os.sched_getaffinity(0))), flush=True)\n"
    "    os._exit(0)\n"
    "os.wait()\n"
)


def test_the_queue_gets_the_last_cpu_and_workers_the_others() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    plan = plan_cpus()
    assert len(cpus) >= 2, "the suite's machines have two cores or more"
    assert plan is not None
    assert plan.queue == {cpus[-1]} and plan.workers == set(cpus[:-1])
    assert plan.to_json() == {"queue": cpus[-1:], "workers": cpus[:-1]}


def test_a_pinned_process_and_its_later_children_stay_on_their_cpus() -> None:
    target = frozenset(sorted(os.sched_getaffinity(0))[:1])
    child = subprocess.Popen([sys.executable, "-c", FORKS_LATER], stdout=subprocess.PIPE, text=True)
    pin(child.pid, target)
    out, _ = child.communicate(timeout=30)
    assert [json.loads(line) for line in out.splitlines()] == [sorted(target)] * 2
    pin(child.pid, target)  # gone by now: not an error
