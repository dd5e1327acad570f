"""A worker's process group read from /proc (procs/harness_cpu.py): its live members' CPU,
every thread's, summed to the nanosecond."""

from __future__ import annotations

import subprocess
import sys
import time

from jobbench.procs import harness_cpu

# A worker: told to go, a thread burns 0.3 s of CPU and ends, then the process idles.
BURNER = """
import sys, threading, time
sys.stdin.readline()
def burn():
    end = time.thread_time() + 0.3
    while time.thread_time() < end:
        pass
thread = threading.Thread(target=burn)
thread.start()
thread.join()
print("burnt", flush=True)
time.sleep(30)
"""


def test_a_worker_group_counts_its_members_cpu_ended_threads_included() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", BURNER],
        start_new_session=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        time.sleep(0.2)  # started, waiting on its stdin
        start = harness_cpu.group_cpu({"w": child.pid})["w"]
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "burnt\n"
        end = harness_cpu.group_cpu({"w": child.pid})["w"]
    finally:
        child.kill()
        child.wait()
    assert 0.3 <= end - start < 0.35, (start, end)
