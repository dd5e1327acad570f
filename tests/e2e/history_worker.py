"""The worker of the throwaway repositories tests/e2e/test_sdk_history.py builds: jobbench's model
worker, each job's sleep multiplied by the number in factor.txt beside this file, which the
repository's commits change (a slowdown, a speedup) or leave alone (noise-only commits). A commit
whose build is broken has a `broken` file beside it: the worker exits before it polls."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from jobbench.workers import bench_handler, policy_worker

HERE = Path(__file__).resolve().parent
if (HERE / "broken").exists():
    sys.exit("this commit's build is broken")
FACTOR = float((HERE / "factor.txt").read_text())
job_spec = bench_handler.job_spec


def scaled(job: dict[str, Any]) -> tuple[float, float, int, bool]:
    seconds, cpu_ms, payload, fail = job_spec(job)
    return seconds * FACTOR, cpu_ms, payload, fail


bench_handler.job_spec = scaled
sys.exit(policy_worker.main())
