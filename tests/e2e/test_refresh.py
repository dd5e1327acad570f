"""refresh_worker as RunPod does it (core/real_workers/refresh_drive.py,
fake_queue/queue/job_queue.py `refresh`): the real runpod SDK in a user command asks for a refresh,
from its handler's return or its start config; the run stops that worker once its jobs are done (or
sees it exit by itself), starts a fresh process in its place, and the rep completes every job,
counting the refreshes. A worker that starts in milliseconds (stdlib, asking as the SDK does) shows
the same between reps, in an autoscaled fleet and under `jobbench workers`. And a `--server` queue
that serves another endpoint id is refused before any worker starts."""

from __future__ import annotations

import json
import signal
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fake_queue.http.server import RunningServer
from tests.e2e.helpers import anomalies_of_the_run, run_burst, run_jobbench
from tests.e2e.test_cleanup_signals import jobbench, stop

FAST = ["--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2"]
HANDLER = Path(__file__).with_name("refresh_handler.py")  # the runpod SDK's
STDLIB_WORKER = Path(__file__).with_name("refresh_worker.py")


def saved(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    doc = json.loads((folder / "reports" / "run.json").read_text())
    lines = (folder / "reports" / "run.events.jsonl").read_text().splitlines()
    return doc, [json.loads(line) for line in lines]


def test_workers_that_ask_for_a_refresh_are_replaced_and_the_rep_completes(
    tmp_path: Path,
) -> None:
    # Two workers of 2 slots, 8 jobs of 20 ms: two processes' worth of jobs each; w0 asks from
    # its handler's return, w1 from its start config (tests/e2e/refresh_handler.py).
    pids = tmp_path / "pids"
    result = run_jobbench(
        "run", "--worker", f"{sys.executable} {HANDLER}", "--workers", "2", "--slots", "2",
        "--burst", "8", "--job-seconds", "0.02", "--reps", "1", "--no-pin-queue", *FAST,
        cwd=tmp_path, env={"REFRESH_PIDS": str(pids)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc, events = saved(tmp_path)
    (rep,) = doc["scenarios"][0]["reps"]
    assert doc["complete"] is True and rep["jobs"]["completed"] == 8
    # The gap between an old process and the fresh one's first take is no stall or hang.
    assert "partial" not in rep and not anomalies_of_the_run(rep)
    # Each process ran two jobs (its batch) and asked once: the first of each worker was
    # stopped (w0) or exited by itself (w1), and a fresh one, another pid, ran two more.
    ran = Counter(tuple(line.split()) for line in pids.read_text().splitlines())
    assert sorted(ran.values()) == [2, 2, 2, 2]
    assert sorted(Counter(worker for worker, _ in ran).values()) == [2, 2]
    asked = [e for e in events if e["ev"] == "refresh"]
    assert rep["refreshes"] == len(asked) == 4
    assert sorted(Counter(e["worker"] for e in asked).values()) == [2, 2]
    # The first refreshes were carried out in the rep, the last ones after it.
    replaced = [e for e in events if e["ev"] == "refreshed"]
    assert sorted(e["worker"] for e in replaced) == sorted({e["worker"] for e in asked})
    assert {e["rc"] for e in replaced} == {0}  # stopped, or exited by itself: never a death
    assert "died" not in result.stderr
    assert result.stderr.count("refreshed (its job") == 2
    assert "refreshed workers (refresh_worker) per rep: 4" in result.stdout


def test_workers_and_run_refuse_a_server_of_another_endpoint_before_any_worker_starts(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server(endpoint_id="abc")
    base = server.base_url
    workers = run_jobbench(
        "workers", "--server", base, "--worker", "model", "--workers", "1", cwd=tmp_path
    )
    run = run_jobbench(
        "run", "--server", base, "--worker", "model", "--burst", "4", "--reps", "1",
        cwd=tmp_path,
    )  # fmt: skip
    expected = (
        f"--server {base}: the queue serves endpoint 'abc', not 'local'; "
        f"pass --server {base}/v2/abc"
    )
    for result in (workers, run):
        assert result.returncode == 2, result.stderr  # not 90 s of 404s, then exit 4
        assert expected in result.stderr
    assert not server.queue.workers  # no worker ever reached it
    assert not (tmp_path / "reports").exists()
    right = run_jobbench(
        "run", "--server", f"{base}/v2/abc", "--worker", "model", "--workers", "1",
        "--slots", "2", "--burst", "4", "--job-seconds", "0.02", "--reps", "1", *FAST,
        cwd=tmp_path,
    )  # fmt: skip
    assert right.returncode == 0, right.stderr


def test_a_refresh_asked_on_a_reps_last_jobs_is_carried_out_before_the_next(tmp_path: Path) -> None:
    # Stopped by SIGTERM (it stays), two jobs a process, over two reps: a refresh asked on a
    # rep's last jobs is carried out before the next rep, which starts with every worker polling.
    stay = run_jobbench(
        "run", "--worker", f"{sys.executable} {STDLIB_WORKER} 2 stay", "--workers", "2",
        "--slots", "1", "--burst", "8", "--job-seconds", "0.02", "--reps", "2",
        "--no-pin-queue", *FAST, cwd=tmp_path,
    )  # fmt: skip
    assert stay.returncode == 0, stay.stderr
    doc, events = saved(tmp_path)
    for number, rep in enumerate(doc["scenarios"][0]["reps"], start=1):
        assert rep["jobs"]["completed"] == 8 and rep.get("refreshes") == 4, (rep, stay.stderr)
        assert not anomalies_of_the_run(rep)
        replaced = [e for e in events if e["ev"] == "refreshed" and e["rep"] == number]
        assert replaced and {e["rc"] for e in replaced} == {-15}  # its SIGTERM: no death
    assert "died" not in stay.stderr
    assert stay.stderr.count("refreshed (its job") >= 6  # 8 asked; the last ones at the end


def test_an_autoscaled_fleets_workers_are_refreshed_and_it_still_scales(tmp_path: Path) -> None:
    # The active worker and the ones the fleet scales up refresh alike (each exits by itself,
    # rc 0, unless the runner's SIGTERM came first); the fleet carries on, and scales down.
    scaled = run_jobbench(
        "run", "--worker", f"{sys.executable} {STDLIB_WORKER} 2 exit", "--workers", "3",
        "--slots", "1", "--burst", "12", "--job-seconds", "0.2", "--reps", "1",
        "--autoscale", "queue-delay=0.3,active=1,idle=1,cold=0,every=0.25", "--label", "fleet",
        "--no-pin-queue", *FAST, cwd=tmp_path,
    )  # fmt: skip
    assert scaled.returncode == 0, scaled.stderr
    fleet_doc = json.loads((tmp_path / "reports" / "fleet.json").read_text())
    (rep,) = fleet_doc["scenarios"][0]["reps"]
    assert rep["jobs"]["completed"] == 12
    lines = (tmp_path / "reports" / "fleet.events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    asked = [e for e in events if e["ev"] == "refresh"]
    assert rep["refreshes"] == len(asked) >= 4  # a process asks on its 2nd job, of 12
    assert len({e["worker"] for e in asked}) >= 2  # the active worker and a scaled one
    replaced = [e for e in events if e["ev"] == "refreshed"]
    assert replaced and {e["rc"] for e in replaced} <= {0, -15}
    assert "died" not in scaled.stderr and "without being stopped" not in scaled.stderr
    assert len(rep["fleet"]["workers"]) >= 2  # it scaled up


def test_jobbench_workers_refreshes_its_workers_too(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    server = start_server()
    args = ["workers", "--server", server.base_url, "--worker", f"{sys.executable} "]
    args[-1] += f"{STDLIB_WORKER} 2 exit"
    with jobbench(*args, "--workers", "1", "--slots", "1", cwd=tmp_path) as (proc, stdout, _):
        stdout.wait_for("polling")
        events = run_burst(server, 4, {"seconds": 0.02}, timeout_s=30)
        outputs = [server.queue.jobs[e["job"]].output for e in events if e["ev"] == "done"]
        stop(proc, signal.SIGINT)
        assert proc.returncode == 130
    assert [e["ev"] for e in events].count("refresh") == 2
    assert sorted(Counter(out["pid"] for out in outputs).values()) == [2, 2]  # two processes
