"""A worker's process group's disk writes read from /proc/<pid>/io (procs/disk_writes.py): a
file rewritten and fsynced counts a page every time, however few its bytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from jobbench.procs import disk_writes

# A child in a process group of its own that writes and fsyncs a small file N times when told
# (a line on stdin), then says so; it waits for the next line, so it is alive when read.
WRITER = """
import os, sys
for line in sys.stdin:
    for _ in range(int(line)):
        with open(sys.argv[1], "w") as f:
            f.write("in progress: job-1 job-2")
            f.flush()
            os.fsync(f.fileno())
    print("done", flush=True)
"""


def test_a_group_that_writes_and_fsyncs_a_page_a_time_counts_a_page_each(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path / "state.txt")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write("1\n")
        child.stdin.flush()
        assert child.stdout.readline() == "done\n"
        before = disk_writes.group_write_bytes({"w": child.pid})["w"]
        child.stdin.write("10\n")
        child.stdin.flush()
        assert child.stdout.readline() == "done\n"
        after = disk_writes.group_write_bytes({"w": child.pid})["w"]
        # Each fsynced rewrite dirties its page again: a page each, whatever the few bytes.
        assert 10 * 4096 <= after - before < 20 * 4096
    finally:
        child.kill()
        child.wait()
    assert disk_writes.group_write_bytes({"w": child.pid}) == {"w": 0}  # no live member: 0
