"""A real runpod SDK handler started without a concurrency_modifier runs one job at a time
whatever --slots says (the SDK's concurrency starts at 1): the run names the worker and the
figure, from the queue's event log, in its printed output and in the result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.helpers import run_jobbench

PLAIN_HANDLER = """
import asyncio

import runpod


async def handler(job):
    await asyncio.sleep(float(job["input"]["seconds"]))
    return {"ok": True}


runpod.serverless.start({"handler": handler})  # no concurrency_modifier: 1 job at a time
"""


def test_a_plain_sdk_handler_at_slots_4_is_named_as_running_one_job_at_once(
    tmp_path: Path,
) -> None:
    (tmp_path / "handler.py").write_text(PLAIN_HANDLER)
    result = run_jobbench(
        "run", "--worker", f"{sys.executable} handler.py", "--slots", "4", "--workers", "1",
        "--burst", "3", "--job-seconds", "0.02", "--reps", "1", "--label", "plain",
        "--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr + result.stdout
    said = (
        "worker 1w-3j-0.02s-w0 ran at most 1 job at once though --slots is 4: it asked for at "
        "most 1 a take while jobs waited, so its handler's concurrency_modifier (or the worker's "
        "own setting) is 1; give --slots 1 or raise its concurrency"
    )
    assert f"rep 1: {said}" in result.stderr  # as the rep ends
    assert said in " ".join(result.stdout.split())  # and under the run table (rich wraps it)
    (rep,) = json.loads((tmp_path / "reports" / "plain.json").read_text())["scenarios"][0]["reps"]
    (found,) = rep["below_slots"]
    assert found["ran_at_most"] == 1 and found["asked_at_most"] == 1 and found["slots"] == 4
    assert found["short_takes"] >= 1
