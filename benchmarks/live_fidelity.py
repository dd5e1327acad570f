"""Live-mode fidelity: client-side figures of `jobbench run --endpoint` against the server's truth.

A fake queue (model latency at full scale) with `--workers` model workers x `--slots` slots runs
on loopback; live mode's driver submits each burst through /run and follows it through /status,
as it would at a real endpoint. The same burst's server event log gives the fake-mode figures.
Printed: time to 50 / 99 / 100 % and end-to-end p50 / p99 from both, the difference, and the
client's terminal-time uncertainty. Clocks: both sides use CLOCK_MONOTONIC.

    .venv/bin/python benchmarks/live_fidelity.py                       # ~2 min
    .venv/bin/python benchmarks/live_fidelity.py --bursts 100:0.05 256:0.5
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import ROOT, all_events, http_json, print_machine, server_process, table

sys.path.insert(0, str(ROOT))

from jobbench.clients.endpoint import Endpoint
from jobbench.clients.live_burst import BurstPlan, LiveBurst
from jobbench.clients.live_http import LiveHttp
from jobbench.measure import metrics
from jobbench.measure.live_metrics import live_rep_measure
from jobbench.procs.spawn import WorkerProcess, stop_all
from jobbench.workers.kinds import worker_process_spec
from jobbench.workers.spec import WorkerSpec

FIGURES = ("time_to_p50_s", "time_to_p99_s", "time_to_p100_s")


async def drive(endpoint: str, n: int, seconds: float) -> Any:
    http = LiveHttp(Endpoint(endpoint))
    inputs = tuple({"seconds": seconds} for _ in range(n))
    plan = BurstPlan(inputs, None, timeout_s=600, expected_execution_s=seconds)
    try:
        return await LiveBurst(http, plan, lambda done, total: None).run(
            asyncio.Event(), asyncio.Event()
        )
    finally:
        await http.close()


def one(url: str, endpoint: str, n: int, seconds: float) -> list[Any]:
    cursor = http_json("POST", url + "/_bench/reset")["cursor"]
    live = live_rep_measure(asyncio.run(drive(endpoint, n, seconds))).figures
    events = all_events(url, cursor)
    truth = metrics.rep_measure(
        events, workers=1, slots=1, burst=n, job_seconds=seconds, wake_latency_s=0.05
    ).figures
    row: list[Any] = [f"{n} x {seconds:g} s"]
    for key in FIGURES:
        row.append(f"{live[key]:.3f} / {truth[key]:.3f} ({live[key] - truth[key]:+.3f})")
    for stat in ("p50", "p99"):
        a, b = live["phases"]["e2e"][stat], truth["phases"]["e2e"][stat]
        row.append(f"{a:.3f} / {b:.3f} ({a - b:+.3f})")
    gap = live["follow"]["terminal_uncertainty"]
    row.append(f"{gap['p50']:.2f} / {gap['max']:.2f}")
    row.append(live["follow"]["status_requests"])
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--bursts", nargs="+", default=["100:0.05", "256:0.5", "1024:0.2"])
    args = parser.parse_args()
    print_machine()
    with server_process([]) as server, tempfile.TemporaryDirectory() as tmp:
        workers = []
        for index in range(args.workers):
            worker_id = f"fid-w{index}"
            spec = WorkerSpec(kind="model", policy="drain")
            argv, env = worker_process_spec(
                spec, worker_id, server.endpoint_url, args.slots, None, Path(tmp)
            )
            workers.append(WorkerProcess(worker_id, argv, env, Path(tmp) / f"{worker_id}.log"))
            workers[-1].start()
        try:
            while not all(
                w.get("polling") for w in http_json("GET", server.url + "/_bench/workers").values()
            ) or len(http_json("GET", server.url + "/_bench/workers")) < len(workers):
                time.sleep(0.05)
            rows = []
            for burst in args.bursts:
                n, seconds = burst.split(":")
                rows.append(one(server.url, server.endpoint_url, int(n), float(seconds)))
        finally:
            stop_all(workers)
    headers = ["burst", *(f"{k} live / server" for k in ("p50", "p99", "p100"))]
    headers += ["e2e p50", "e2e p99", "uncertainty p50 / max", "status calls"]
    print(f"\n{args.workers} model workers x {args.slots} slots, take 0.5 s, wake 50 ms")
    print(table(headers, rows))


if __name__ == "__main__":
    main()
