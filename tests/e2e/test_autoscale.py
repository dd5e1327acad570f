"""An autoscaled fleet on real worker processes (docs/fleet.md): the real CLI against the
embedded fake queue, scaled-down latencies. The platform's decisions come from the queue's log
(the rules themselves: tests/unit/test_fleet_scaler.py); here each is carried out with
processes: a scale-up starts one after its cold start, an idle one gets SIGTERM and its own
shutdown, every job ends exactly once, and no process is left behind, for the model worker,
the real runpod SDK and a user command alike."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import anomalies_of_the_run, run_jobbench
from tests.e2e.test_cleanup_signals import assert_nothing_left, groups_of, jobbench, stop

HERE = Path(__file__).parent
FAST = ["--take-latency", "0.02", "--wake-latency", "0.01", "--hold", "1"]


def autoscaled(tmp_path: Path, *args: str, label: str = "run") -> dict[str, Any]:
    (tmp_path / "tmp").mkdir(exist_ok=True)
    done = run_jobbench(
        "run", *FAST, *args, "--label", label, "--quiet", cwd=tmp_path,
        env={"TMPDIR": str(tmp_path / "tmp")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert_nothing_left(tmp_path, set())  # every worker the fleet started has gone
    doc: dict[str, Any] = json.loads((tmp_path / "reports" / f"{label}.json").read_text())
    return doc


def check_rep(rep: dict[str, Any], jobs: int, idle_s: float, cold_s: float) -> dict[str, Any]:
    """What every autoscaled rep must show: all jobs done once, every added worker started
    after its cold start, polled, went idle, was stopped for it and exited cleanly."""
    assert rep["jobs"]["completed"] == jobs and "redelivered" not in rep["jobs"]
    assert "lost" not in rep["jobs"] and not anomalies_of_the_run(rep)
    fleet = rep["fleet"]
    added = {w: life for w, life in fleet["workers"].items() if not life["active"]}
    assert added and fleet["cold_starts"] == len(added)
    for life in added.values():
        assert life["started_s"] >= life["decided_s"] + cold_s - 0.005  # the modelled part
        assert life["polling_s"] > life["started_s"]  # then the process's own start-up
        assert life["stop_reason"] == f"idle {idle_s:g} s"
        # idle for idle_s, then stopped: a timer never fires early, and one on a machine busy
        # with other tests fires late (the rule's exact instants: tests/unit/test_fleet_scaler.py)
        idle_ends = life["idle"][-1][0] + idle_s
        assert idle_ends - 0.005 <= life["stopping_s"] < idle_ends + 1.0
        assert life["stopped_s"] > life["stopping_s"]
        assert life["billed_s"] == pytest.approx(life["stopped_s"] - life["decided_s"], abs=1e-3)
    assert fleet["peak_workers"] <= 3 and fleet["size"][-1][1] == 1  # back to the active one
    return fleet


def test_model_workers_scale_up_on_queue_delay_and_idle_out(tmp_path: Path) -> None:
    doc = autoscaled(
        tmp_path, "--worker", "model", "-w", "3", "-s", "4", "--burst", "48",
        "--job-seconds", "0.3", "--reps", "2",
        "--autoscale", "queue-delay=0.5,active=1,idle=0.8,cold=0.1,every=0.25",
    )  # fmt: skip
    (entry,) = doc["scenarios"]
    assert entry["params"]["fleet"]["scaler"] == "queue-delay"
    for rep in entry["reps"]:
        fleet = check_rep(rep, 48, 0.8, 0.1)
        ups = [life["decided_s"] for life in fleet["workers"].values() if not life["active"]]
        # never before a job has waited 0.5 s; the first look after it is at 0.5 s (looks every
        # 0.25 s from 0), later only by a busy machine's lateness
        assert 0.5 - 0.005 <= min(ups) < 1.0
        assert all(
            "queue delay" in life["reason"] for life in fleet["workers"].values() if life["reason"]
        )
    assert entry["summary"]["fleet_worker_s"]["median"] > 0
    cpu = entry["reps"][-1]["harness"]  # the harness's own CPU: the queue, the driver, each
    assert cpu["queue_cores"] > 0 and cpu["driver_cores"] > 0  # worker alive at the rep's end
    assert "3w-48j-0.3s-qd0.5-w0" in cpu["worker_cores"] and cpu["cpus"] == os.cpu_count()


def test_request_count_starts_its_target_at_once_and_the_sim_predicts_it(tmp_path: Path) -> None:
    doc = autoscaled(
        tmp_path, "--worker", "model", "-w", "3", "-s", "4", "--burst", "60",
        "--job-seconds", "0.3", "--reps", "1",
        "--autoscale", "request-count=20,active=1,idle=0.6,cold=0.2",
    )  # fmt: skip
    (entry,) = doc["scenarios"]
    fleet = check_rep(entry["reps"][0], 60, 0.6, 0.2)
    ups = sorted(life["decided_s"] for life in fleet["workers"].values() if not life["active"])
    # ceil(60 / 20) = 3 workers, 1 running: 2 started at once, before the first job is done
    assert len(ups) == 2 and ups[-1] < entry["reps"][0]["time_to_first_s"]
    # The same queue and scaler, simulated, is the lower bound (a real worker polls after its
    # process's start-up); how close it comes is bounded with the machine to itself in
    # benchmarks/timed/test_sim_vs_real.py.
    assert entry["reps"][0]["time_to_p99_s"] >= entry["predicted"]["time_to_p99_s"] * 0.85


def test_the_real_runpod_sdk_is_scaled_up_stopped_and_shuts_down_clean(tmp_path: Path) -> None:
    doc = autoscaled(
        tmp_path, "--worker", "runpod", "-w", "2", "-s", "4", "--burst", "24",
        "--job-seconds", "0.5", "--reps", "1",
        "--autoscale", "queue-delay=0.5,active=1,idle=1,cold=0",
    )  # fmt: skip
    (entry,) = doc["scenarios"]
    assert entry["sdk"]["version"] == "1.12.0"
    fleet = check_rep(entry["reps"][0], 24, 1.0, 0.0)
    (life,) = [w for w in fleet["workers"].values() if not w["active"]]
    # SIGTERM to exit: the SDK's shutdown ends its loops after their current await (a 1 s
    # tick at most); its long-polls were answered at the stop, so it never waits a hold
    assert life["stopped_s"] - life["stopping_s"] < 5
    assert life["polling_s"] - life["started_s"] > 0.3  # it imported runpod: a real start-up


def test_a_user_command_worker_is_autoscaled_like_the_others(tmp_path: Path) -> None:
    worker = f"{sys.executable} {HERE / 'crash_handler.py'}"
    doc = autoscaled(
        tmp_path, "--worker", worker, "-w", "2", "-s", "4", "--burst", "24",
        "--job-seconds", "0.5", "--reps", "1",
        "--autoscale", "queue-delay=0.5,active=1,idle=1,cold=0",
    )  # fmt: skip
    check_rep(doc["scenarios"][0]["reps"][0], 24, 1.0, 0.0)


def test_a_worker_stopped_while_it_holds_take_ahead_jobs_runs_them_and_loses_none(
    tmp_path: Path,
) -> None:
    """SIGTERM (term worker fault) to the active worker while its take-ahead buffer holds jobs:
    its shutdown takes no more but runs and posts what it holds; the platform is told it
    stopped and scales another up for the rest. No job lost or doubled."""
    doc = autoscaled(
        tmp_path, "--worker", "model", "--policy", "take-ahead", "--take-ahead", "8",
        "-w", "2", "-s", "2", "--burst", "30", "--job-seconds", "0.5", "--reps", "1",
        "--worker-fault", "term:0.6:w0",
        "--autoscale", "request-count=1000,active=1,idle=1,cold=0",
    )  # fmt: skip
    (rep,) = doc["scenarios"][0]["reps"]
    assert rep["jobs"]["completed"] == 30 and "lost" not in rep["jobs"]
    assert "redelivered" not in rep["jobs"] and rep["faults"] == {"worker:term": 1}
    w0 = next(w for w in rep["split"]["jobs_per_worker"] if w.endswith("-w0"))
    # at 0.6 s w0 ran 2 and held 8 more ahead (10 taken); it ran them all after its SIGTERM
    assert rep["split"]["jobs_per_worker"][w0] == 10
    assert rep["held"]["buffered_jobs"] >= 8
    added = [w for w, life in rep["fleet"]["workers"].items() if not life["active"]]
    assert added  # the platform counted w0 gone and started another for the rest


def test_sigterm_mid_rep_stops_every_fleet_worker_and_marks_the_result(tmp_path: Path) -> None:
    args = [
        "run", *FAST, "--worker", "model", "-w", "3", "-s", "2", "--burst", "400",
        "--job-seconds", "0.2", "--reps", "2",
        "--autoscale", "request-count=10,active=1,idle=5,cold=0",
    ]  # fmt: skip
    with jobbench(*args, cwd=tmp_path) as (proc, _, err):
        err.wait_for("fleet: started")
        groups = groups_of(proc)
        assert len(groups) >= 3  # the queue, the active worker, a worker the fleet started
        stop(proc, signal.SIGTERM)
        assert proc.returncode == 130
    assert_nothing_left(tmp_path, groups)
    doc = json.loads((tmp_path / "reports" / "run.json").read_text())
    assert doc["complete"] is False and doc["interrupted"] is True
