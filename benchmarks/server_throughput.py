"""Server throughput: completed take -> done round trips per second with zero latencies.

One server process (take 0, wake 0, done 0), pre-filled with bursts so no take ever waits; load
from separate client processes, each an asyncio loop with aiohttp keeping N concurrent loops of
GET job-take (one job) -> POST job-done. Round trips are counted over a fixed window after a
warm-up, both by the clients (done answers received in the window) and by the server (`done`
events in its log with t in the window; CLOCK_MONOTONIC is shared by the processes). Also
reports the server process's CPU use in the window and per round trip.
Target: >= 3,000 round trips/s.

    .venv/bin/python benchmarks/server_throughput.py                  # 1 then 2 client processes
    .venv/bin/python benchmarks/server_throughput.py --procs 2 --launcher \\
        "python benchmarks/server_variants.py --variant uvloop,orjson"
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import shutil
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import aiohttp
from common import (
    CpuMeter,
    add_server_args,
    all_events,
    burst,
    cpu_seconds,
    describe_cpu,
    launcher_argv,
    print_machine,
    server_process,
    state,
    summary,
    table,
    vm_rss_kib,
)

TARGET_RPS = 3000.0
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
DONE_BODY = b'{"output": 1}'
JOIN_TIMEOUT_S = 30.0


# ---- client process --------------------------------------------------------------------------
async def worker_loop(
    session: aiohttp.ClientSession,
    endpoint: str,
    worker: str,
    start: float,
    end: float,
    stop: float,
    out: dict[str, Any],
) -> None:
    take_url = f"{endpoint}/job-take/{worker}"
    params = {"gpu": "cpu", "job_in_progress": "0"}
    done_params = {"gpu": "cpu", "isStream": "false"}
    while True:
        t0 = time.monotonic()
        if t0 >= stop:
            return
        async with session.get(take_url, params=params) as resp:
            if resp.status != 200:
                out["empty"] += 1
                await resp.read()
                continue
            job = await resp.json(content_type=None)
        async with session.post(
            f"{endpoint}/job-done/{worker}/{job['id']}",
            params=done_params,
            data=DONE_BODY,
            headers=FORM,
        ) as resp:
            await resp.read()
            ok = resp.status == 200
        t1 = time.monotonic()
        if not ok:
            out["errors"] += 1
        elif start <= t1 < end:
            out["count"] += 1
            if len(out["rtt"]) < 200_000:
                out["rtt"].append((t1 - t0) * 1e3)


async def client_main(
    endpoint: str, proc: int, concurrency: int, start: float, end: float, stop: float
) -> dict[str, Any]:
    out: dict[str, Any] = {"count": 0, "errors": 0, "empty": 0, "rtt": []}
    conn = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=conn, timeout=timeout) as session:
        await asyncio.gather(
            *(
                worker_loop(session, endpoint, f"p{proc}c{i:03d}", start, end, stop, out)
                for i in range(concurrency)
            )
        )
    return out


def client_process(
    endpoint: str, proc: int, concurrency: int, loop_kind: str, conn: Connection
) -> None:
    if loop_kind == "uvloop":
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    conn.send(("ready", os.getpid()))
    start, end, stop = conn.recv()
    try:
        result = asyncio.run(client_main(endpoint, proc, concurrency, start, end, stop))
    except BaseException as exc:  # reported to the parent, never a hang
        conn.send(("error", repr(exc)))
        raise
    result["cpu_s"] = time.process_time()
    conn.send(("done", result))


# ---- one measurement ---------------------------------------------------------------------------
def measure(args: argparse.Namespace, procs: int, launcher: list[str] | None) -> dict[str, Any]:
    srv_args = [
        "--take-latency",
        "0",
        "--wake-latency",
        "0",
        "--done-latency",
        "0",
        "--hold",
        "20",
        *args.server_arg,
    ]
    with server_process(srv_args, launcher) as srv:
        left = args.prefill
        while left > 0:
            left -= burst(srv.url, min(left, 50_000))["count"]
        ctx = mp.get_context("spawn")
        pipes, children = [], []
        for p in range(procs):
            parent_end, child_end = ctx.Pipe()
            child = ctx.Process(
                target=client_process,
                daemon=True,
                args=(srv.endpoint_url, p, args.concurrency, args.client_loop, child_end),
            )
            child.start()
            pipes.append(parent_end)
            children.append(child)
        pids = [_expect(pipe, "ready", 20)[1] for pipe in pipes]
        start = time.monotonic() + 0.3 + args.warmup
        end = start + args.window
        for pipe in pipes:
            pipe.send((start, end, end + 0.2))
        time.sleep(max(0.0, start - time.monotonic()))
        spy = _start_profile(args, srv.pid, procs)
        cpu0 = cpu_seconds(srv.pid)
        ccpu0 = [cpu_seconds(pid) for pid in pids]
        meter = CpuMeter()
        for pid in [srv.pid, *pids, os.getpid()]:
            meter.track(pid)
        time.sleep(max(0.0, end - time.monotonic()))
        cpu1 = cpu_seconds(srv.pid)
        rss_mb = vm_rss_kib(srv.pid) / 1024
        ccpu1 = [cpu_seconds(pid) for pid in pids]
        cpu = meter.stop()
        if spy is not None:
            spy.wait(JOIN_TIMEOUT_S)
        results = [_expect(pipe, "done", JOIN_TIMEOUT_S)[1] for pipe in pipes]
        for child in children:
            child.join(JOIN_TIMEOUT_S)
        final = state(srv.url)
        # the server's own count, from its event log after the run (polling /_bench/state in
        # the window would stall the server: its counts() walks every job)
        lo, hi = int(start * 1e9), int(end * 1e9)
        done = sum(1 for e in all_events(srv.url) if e["ev"] == "done" and lo <= e["t"] < hi)
    count = sum(r["count"] for r in results)
    rtt = summary([x for r in results for x in r["rtt"]])
    return {
        "procs": procs,
        "concurrency": args.concurrency,
        "client_rps": count / args.window,
        "server_rps": done / args.window,
        "server_cpu": (cpu1 - cpu0) / args.window,
        "client_cpu": sum(b - a for a, b in zip(ccpu0, ccpu1, strict=True)) / args.window,
        "cpu_us_per_rt": (cpu1 - cpu0) / max(done, 1) * 1e6,
        "rtt_median": rtt["median"],
        "rtt_p99": rtt["p99"],
        "errors": sum(r["errors"] for r in results),
        "empty": sum(r["empty"] for r in results),
        "left_in_queue": final["counts"]["in_queue"],
        "conservation": final["conservation"],
        "rss_mb": rss_mb,
        "cpu": cpu,
    }


def _start_profile(args: argparse.Namespace, pid: int, procs: int) -> Any:
    """py-spy on the server for the window (--profile): raw collapsed stacks to a file."""
    if not args.profile:
        return None
    import subprocess

    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    out = f"{args.profile}.{procs}procs.txt"
    print(f"profiling the server with py-spy -> {out}")
    cmd = [
        spy,
        "record",
        "--pid",
        str(pid),
        "--duration",
        str(int(args.window)),
        "--rate",
        "250",
        "--nonblocking",
        "--format",
        "raw",
        "-o",
        out,
    ]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _expect(pipe: Connection, tag: str, timeout: float) -> tuple[str, Any]:
    if not pipe.poll(timeout):
        raise RuntimeError(f"client process sent no {tag!r} within {timeout} s")
    msg = pipe.recv()
    if msg[0] != tag:
        raise RuntimeError(f"client process failed: {msg[1]}")
    return tuple(msg)  # type: ignore[return-value]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--procs",
        type=int,
        action="append",
        default=None,
        help="client processes; repeat for several runs (default: 1 and 2)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=32,
        help="concurrent take->done loops per client process (default 32)",
    )
    p.add_argument("--window", type=float, default=10.0, help="counting window, s (default 10)")
    p.add_argument("--warmup", type=float, default=2.0, help="warm-up before the window, s")
    p.add_argument(
        "--prefill",
        type=int,
        default=150_000,
        help="jobs queued before the load starts (default 150,000: 12 s at 12,000/s)",
    )
    p.add_argument(
        "--client-loop",
        choices=("asyncio", "uvloop"),
        default=None,
        help="event loop of the client processes (default uvloop if installed)",
    )
    add_server_args(p)
    p.add_argument(
        "--profile",
        default=None,
        metavar="PREFIX",
        help="record the server with py-spy during the window (PREFIX.Nprocs.txt, raw "
        "stacks; summarise with benchmarks/pyspy_summary.py); adds a little load",
    )
    args = p.parse_args(argv)
    if args.client_loop is None:
        try:
            import uvloop  # noqa: F401

            args.client_loop = "uvloop"
        except ImportError:
            args.client_loop = "asyncio"
    launcher = launcher_argv(args)

    print_machine()
    rows = []
    for procs in args.procs or [1, 2]:
        r = measure(args, procs, launcher)
        rows.append(
            [
                r["procs"],
                r["procs"] * r["concurrency"],
                r["client_rps"],
                r["server_rps"],
                r["server_cpu"] * 100,
                r["client_cpu"] * 100,
                r["cpu_us_per_rt"],
                r["rtt_median"],
                r["rtt_p99"],
                r["errors"] + r["empty"],
                r["left_in_queue"],
                r["rss_mb"],
            ]
        )
        print(f"{procs} client process(es): {describe_cpu(r['cpu'])}")
        if r["left_in_queue"] == 0:
            print("WARNING: the queue ran dry, so takes waited: raise --prefill and run again")
        if r["conservation"]:
            print(f"WARNING: conservation check failed: {r['conservation']}")
    print(
        f"\nserver: {args.launcher or 'python -m fake_queue'}; clients: {args.client_loop}, "
        f"{args.concurrency} loops per process; window {args.window:g} s after "
        f"{args.warmup:g} s warm-up; pre-filled {args.prefill} jobs"
    )
    print(
        table(
            [
                "procs",
                "loops",
                "client rt/s",
                "server rt/s",
                "server cpu%",
                "clients cpu%",
                "server us/rt",
                "rtt p50 ms",
                "rtt p99 ms",
                "errors",
                "left queued",
                "server RSS MB",
            ],
            rows,
        )
    )
    best = max(row[3] for row in rows)
    print(
        f"target >= {TARGET_RPS:.0f} round trips/s (server count): "
        f"{'MET' if best >= TARGET_RPS else 'MISSED'} (best {best:.0f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
