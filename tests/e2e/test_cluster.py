"""`jobbench run --cluster` and the commands that run lanes on a real Ray cluster of two nodes on
this machine: a head and a second node, two raylets on 127.0.0.1, started once for the module
(Ray's own `ray.cluster_utils.Cluster`, in a temp folder and on ports of their own, so another
Ray on the machine is never touched). In file order: a sweep's cells as tasks on both nodes, its
documents a local sweep's byte for byte; compare and an A/A gate with their rows in lanes, each
row's two sides on the same nodes; a trend whose pairs of commits run at once, stopped by Ctrl-C
and run again; a node lost under a gate in lanes (the test then gives the cluster a fresh second
node); a burst on workers spread over both nodes whose second node's raylet is killed mid-rep,
which breaks the cluster, so it goes last. Ray's processes fill this two-core machine, and each
run on the cluster costs about 10 s of CPU: benchmarks/cluster/ holds the rest (a burst of real
SDK workers from a shared checkout, Ctrl-C of a run); the cluster's flags and a missing Ray are
tests/unit/test_ray_cluster.py.

Each test reads the run's key from a live worker's environment (none is given: the run makes
one) and then looks for it in every file the run left and in what it printed. Nothing may be
left running: no process whose environment names a worker folder on the nodes, and no guard."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
import pytest
from ray import cluster_utils as ray_cluster_utils

from jobbench.clients.bench_client import BenchClient
from tests.e2e.helpers import run_jobbench, start_jobbench
from tests.e2e.test_sdk_history import SCENARIO as HISTORY_ROW
from tests.e2e.test_sdk_history import build_history, shas
from tests.machine_share import MachineShare

GCS_PORT = 6410  # the head's; the other ports are Ray's picks
CLIENT_PORT = 6411
NODE_CPUS = 2  # logical CPUs per node: a test's two one-CPU workers spread one a node
FAST = ["--take-latency", "0.01", "--wake-latency", "0.01", "--hold", "1", "--worker", "model"]
LEFT_S = 10.0  # a guard polls every 0.2 s; Ray takes a few seconds to see a node gone


@pytest.fixture(scope="module")
def cluster(machine_share: MachineShare) -> Iterator[dict[str, Any]]:
    """The cluster for this module, started and stopped only beside other tests, never beside a
    quiet one: Ray's start-up fills this two-core machine for seconds, and a module fixture is
    set up before its test's own share of the machine (tests/machine_share.py) is taken. The
    share is let go between: a test takes its own, and a quiet test waiting for the machine
    would otherwise wait on this module while its next test waited on the quiet one."""
    with contextlib.ExitStack() as up:
        with machine_share.shared():
            running = up.enter_context(two_node_cluster())
        yield running
        with machine_share.shared():
            up.close()


@contextlib.contextmanager
def two_node_cluster() -> Iterator[dict[str, Any]]:
    """The two nodes, their processes' temp folder (each worker's own folder is made there) and
    the environment a jobbench run needs to reach them. Every process is stopped at the end,
    whatever happened, by the Cluster's own pids and then by anything naming its folder."""
    # In /tmp itself: Ray's socket paths under it must stay within AF_UNIX's 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="jbc-", dir="/tmp"))
    node_tmp = root / "nodes"
    node_tmp.mkdir()
    env = {
        # Ray writes its cluster address file under RAY_TMPDIR: ours, not /tmp/ray's.
        "RAY_TMPDIR": str(root),
        # Ray swaps 127.0.0.1 for the machine's address unless told that this is one machine.
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        # The nodes import this checkout's jobbench (the actors' class): installed in a node's
        # image on a real cluster (docs/distributed.md).
        "PYTHONPATH": str(Path(__file__).parents[2]),
        "TMPDIR": str(node_tmp),
    }
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        made = ray_cluster_utils.Cluster(
            initialize_head=True,
            connect=False,
            head_node_args={
                "num_cpus": NODE_CPUS,
                "node_ip_address": "127.0.0.1",
                "gcs_server_port": GCS_PORT,
                "ray_client_server_port": CLIENT_PORT,
                "temp_dir": str(root / "ray"),
                "include_dashboard": False,
                # A lost node seen within about two seconds, not Ray's default fifteen.
                "_system_config": {
                    "health_check_period_ms": 500,
                    "health_check_failure_threshold": 3,
                },
            },
        )
        try:
            second = made.add_node(num_cpus=NODE_CPUS, node_ip_address="127.0.0.1")
            made.wait_for_nodes()
            yield {
                "address": f"127.0.0.1:{GCS_PORT}",
                "made": made,
                "second": second,
                "node_tmp": node_tmp,
                "env": {k: env[k] for k in ("RAY_TMPDIR", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")},
            }
        finally:
            made.shutdown()
            for process in _naming(str(root)):
                with contextlib.suppress(psutil.Error):
                    process.kill()
            shutil.rmtree(root, ignore_errors=True)


def _naming(text: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline", "environ", "status"]):
        info = process.info
        if info["status"] == psutil.STATUS_ZOMBIE or process.pid == os.getpid():
            continue
        texts = [*(info["cmdline"] or ()), *(info["environ"] or {}).values()]
        if any(text in t for t in texts):
            found.append(process)
    return found


def workers_on_nodes(cluster: dict[str, Any]) -> list[psutil.Process]:
    """Worker processes of ours: their HOME is their folder on a node."""
    return _naming(f"{cluster['node_tmp']}{os.sep}jobbench-node-")


def guards() -> list[psutil.Process]:
    return [p for p in _naming("raylet_gone") if p.info["cmdline"][:2] != ["grep"]]


def assert_nothing_left(cluster: dict[str, Any], lost: Collection[str] = ()) -> None:
    """No worker process and no guard; no folder on a node but those of the `lost` workers,
    whose node went (here its disk stays: both nodes are this machine)."""
    deadline = time.monotonic() + LEFT_S
    while (left := workers_on_nodes(cluster) + guards()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, [(p.pid, p.info["cmdline"]) for p in left]
    stayed = [
        path
        for path in cluster["node_tmp"].glob("jobbench-node-*/*")
        if path.name.removesuffix(".log") not in lost
    ]
    assert not stayed, "a worker folder stayed on a node"


def key_of_a_worker(cluster: dict[str, Any], timeout_s: float = 60) -> str:
    """The run's key, from a live worker's environment (the run made it)."""
    return worker_env(cluster, "RUNPOD_AI_API_KEY", timeout_s)


def worker_env(cluster: dict[str, Any], name: str, timeout_s: float = 60) -> str:
    """Environment variable `name` of a live worker on the nodes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for process in workers_on_nodes(cluster):
            with contextlib.suppress(psutil.Error):
                value = str(process.environ().get(name) or "")
                if value:
                    return value
        time.sleep(0.05)
    raise AssertionError("no worker started on the nodes")


def until_every_worker_holds_jobs(
    cluster: dict[str, Any], key: str, workers: int, timeout_s: float = 60
) -> None:
    """Until a queue of the run (a worker's take URL names it) sees each of its `workers`
    holding a job: a rep's burst has reached them all. A run in lanes has a queue a row and
    side; the one with `workers` workers is looked for."""
    deadline = time.monotonic() + timeout_s
    held: list[int] = []
    while time.monotonic() < deadline:
        for queue_url in queues_of_workers(cluster):
            # A queue of another side's key refuses it, and a rep's queue may be gone.
            with (
                contextlib.closing(BenchClient(queue_url, key)) as queue,
                contextlib.suppress(Exception),
            ):
                held = [seen.get("held", 0) for seen in queue.workers().values()]
                if len(held) == workers and all(held):
                    return
        time.sleep(0.05)
    raise AssertionError(f"no queue saw {workers} workers each holding a job within {timeout_s} s")


def queues_of_workers(cluster: dict[str, Any]) -> set[str]:
    """The queues the live workers on the nodes take from (scheme://host:port)."""
    found = set()
    for process in workers_on_nodes(cluster):
        with contextlib.suppress(psutil.Error):
            url = urlsplit(str(process.environ().get("RUNPOD_WEBHOOK_GET_JOB") or ""))
            if url.netloc:
                found.add(f"{url.scheme}://{url.netloc}")
    return found


class Stderr:
    """A child's stderr lines as they come, read by a thread (the child never blocks on it)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        self.lines: list[str] = []
        stream = proc.stderr
        self.thread = threading.Thread(target=lambda: self.lines.extend(stream), daemon=True)
        self.thread.start()

    def wait_for(self, text: str, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while not any(text in line for line in self.lines):
            assert self.thread.is_alive() and time.monotonic() < deadline, str(self)
            time.sleep(0.05)

    def __str__(self) -> str:
        self.thread.join(5)
        return "".join(self.lines)


def assert_key_nowhere(key: str, *places: Path, printed: str = "") -> None:
    assert key not in printed
    for place in places:
        files = [place] if place.is_file() else [p for p in place.rglob("*") if p.is_file()]
        for path in files:
            assert key.encode() not in path.read_bytes(), path


# ---- sweep --cluster: a sweep's cells as tasks on the same two nodes ----------------------------
# 12 cells of short bursts, a sampled latency and two reps a cell: seeds matter.
SMALL_SWEEP = (
    "sweep", "--workers", "1,2,4", "--slots", "4,8", "--take-ahead", "0,4", "--burst", "64",
    "--job-seconds", "0.02", "--take-latency", "uniform:0.01,0.03",
    "--wake-latency", "0.005", "--hold", "2", "--reps", "2", "--seed", "11",
)  # fmt: skip


def sweep_files(folder: Path) -> dict[str, bytes]:
    """Every file a sweep wrote under `folder`, by its path there."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_cluster_sweep_writes_the_local_sweeps_bytes_from_cells_on_both_nodes(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    local, remote = tmp_path / "local", tmp_path / "cluster"
    local.mkdir()
    remote.mkdir()
    done = run_jobbench(*SMALL_SWEEP, "--processes", "1", "--html", "page.html", cwd=local)
    assert done.returncode == 0, done.stderr
    expected = sweep_files(local)
    done = run_jobbench(
        *SMALL_SWEEP, "--cluster", cluster["address"], "--html", "page.html", cwd=remote,
        env=cluster["env"],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert set(expected) == {"page.html", "reports/sweep.sweep.json", "reports/sweep.sweep.csv"}
    assert sweep_files(remote) == expected
    cpus = 2 * NODE_CPUS
    assert f"cluster: {cluster['address']}, 2 nodes, {cpus} CPUs" in done.stderr
    nodes = re.search(r"sweep: cells ran on (\d) nodes of \S+: (.*)", done.stderr)
    assert nodes is not None, done.stderr
    counts = re.findall(r"[0-9a-f]{8} 127\.0\.0\.1 \((\d+)\)", nodes[2])
    assert nodes[1] == "2" and len(counts) == 2 and sum(map(int, counts)) == 12


# ---- compare and gate --cluster: rows in lanes, each row's two sides on the same nodes --------
LANES_SUITE = """
[suites.rows]
reps = 3
latency = {take = 0.01, wake = 0.01, hold = 1}
scenarios = [
  {name = "two", workers = 2, slots = 4, burst = 32, job_seconds = 0.02},
  {name = "one", workers = 1, slots = 4, burst = 16, job_seconds = 0.02},
]
"""


@pytest.mark.parametrize(
    ("command", "sides", "codes"),
    [("gate", ("main", "main"), (0, 3)), ("compare", ("main", "pr"), (0,))],
    ids=["gate-a-a", "compare"],
)
def test_a_cluster_comparison_runs_rows_in_lanes_each_rows_sides_on_the_same_nodes(
    cluster: dict[str, Any],
    tmp_path: Path,
    command: str,
    sides: tuple[str, str],
    codes: tuple[int, ...],
) -> None:
    (tmp_path / "jobbench.toml").write_text(LANES_SUITE)
    done = run_jobbench(
        command, *sides, "--suite", "rows", "--reps", "3", "--format", "json",
        "--cluster", cluster["address"], cwd=tmp_path, env=cluster["env"],
    )  # fmt: skip
    assert done.returncode in codes, done.stderr
    assert "2 lanes: the 2 rows run side by side" in done.stderr  # 3 CPUs of the 4 hold both
    comparison = json.loads(done.stdout)
    assert [row["scenario"] for row in comparison["rows"]] == ["two", "one"]
    labels = [sides[0], sides[1] if sides[1] != sides[0] else f"{sides[1]}-b"]
    docs = [json.loads((tmp_path / "reports" / f"{label}.json").read_text()) for label in labels]
    used: set[str] = set()
    for a_row, b_row in zip(docs[0]["scenarios"], docs[1]["scenarios"]):
        assert len(a_row["reps"]) == len(b_row["reps"]) == 3
        for a_rep, b_rep in zip(a_row["reps"], b_row["reps"]):
            # Each side's N-th worker ran on one node: the sides met the same machines.
            assert a_rep["worker_nodes"] == b_rep["worker_nodes"], a_row["name"]
            used |= set(a_rep["worker_nodes"].values())
    assert len(used) == 2  # the two-worker row spread over both nodes
    assert_nothing_left(cluster)


# ---- trend --cluster: pairs of commits at once, stopped and resumed ------------------------------
def test_a_cluster_trend_runs_pairs_of_commits_at_once_and_a_ctrl_c_leaves_nothing(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    """Six commits, three pairs of neighbours, one one-worker row: the four CPUs hold every
    pair's row at once. Ctrl-C while they run stops every worker on both nodes; the same trend
    again runs the pairs side by side, each pair's two commits on the same node."""
    repo = tmp_path / "sdk"
    build_history(repo, [1.0] * 3 + [1.5] * 3)
    env = {**cluster["env"], "XDG_CACHE_HOME": str(tmp_path / "cache")}
    trend = (
        "trend", "v0..HEAD", "--repo", str(repo), *HISTORY_ROW, "--reps", "2",
        "--cluster", cluster["address"], "--format", "json",
    )  # fmt: skip
    proc = start_jobbench(*trend, cwd=tmp_path, env=env)
    said = Stderr(proc)
    said.wait_for("3 pairs of commits at once")
    worker_env(cluster, "RUNPOD_AI_API_KEY")  # a pair's workers are up on a node
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 130, str(said)
    assert "every commit that finished is kept" in str(said)
    assert_nothing_left(cluster)

    done = run_jobbench(*trend, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "3 pairs of commits at once (3 lanes)" in done.stderr, done.stderr
    doc = json.loads(done.stdout)
    assert [len(commit["rows"]) for commit in doc["commits"]] == [1] * 6, doc["commits"]
    reps = []
    for left, right in zip(shas(repo)[::2], shas(repo)[1::2]):
        sides = [
            json.loads((tmp_path / "reports" / f"sdk-{sha[:12]}.json").read_text())
            for sha in (left, right)
        ]
        a_reps, b_reps = (side["scenarios"][0]["reps"] for side in sides)
        assert len(a_reps) == len(b_reps) == 2
        for a_rep, b_rep in zip(a_reps, b_reps):
            assert a_rep["worker_nodes"] == b_rep["worker_nodes"]  # a pair meets one machine
        reps += a_reps + b_reps
    # Pairs overlapped: a rep ran while another pair's did (the lanes' count, at its start).
    assert max(rep["lanes"] for rep in reps) >= 2, [rep["lanes"] for rep in reps]
    assert_nothing_left(cluster)


# ---- a node lost with rows in lanes --------------------------------------------------------------
def test_a_node_lost_under_a_gate_in_lanes_stops_every_row_and_names_it(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    """Both rows of an A/A gate in lanes, the two-worker row on both nodes: the second node's
    raylet killed mid-rep ends the call (exit 4) naming the worker and its node, every lane's
    processes stopped on the node that stayed, both results saved and marked incomplete. The
    cluster gets a fresh second node for the test after."""
    # The two-worker row's reps long enough (400 jobs of 0.05 s) for the kill to land in one.
    longer = LANES_SUITE.replace(
        "burst = 32, job_seconds = 0.02", "burst = 400, job_seconds = 0.05"
    )
    (tmp_path / "jobbench.toml").write_text(longer)
    proc = start_jobbench(
        "gate", "main", "main", "--suite", "rows", "--reps", "3",
        "--cluster", cluster["address"], cwd=tmp_path, env=cluster["env"],
    )  # fmt: skip
    said = Stderr(proc)
    said.wait_for("2 lanes")
    key = key_of_a_worker(cluster)
    until_every_worker_holds_jobs(cluster, key, workers=2)  # the two-worker row's rep is on
    second = cluster["second"]
    second.kill_raylet()
    try:
        assert proc.wait(120) == 4, str(said)
        err = str(said)
        assert f"node {second.node_id[:12]} (127.0.0.1)" in err and "was lost with its node" in err
        for label in ("main", "main-b"):
            doc = json.loads((tmp_path / "reports" / f"{label}.json").read_text())
            assert doc["complete"] is False, label
        lost = [
            worker
            for side in ("main", "main-b")
            for node in json.loads((tmp_path / "reports" / f"{side}.json").read_text())[
                "environment"
            ]["cluster"]["nodes"]
            if node["id"] == second.node_id
            for worker in node["workers"]
        ]
        assert_key_nowhere(key, tmp_path, printed=err)
        assert_nothing_left(cluster, lost=lost)
    finally:
        # The lost node's disk goes with it (here both nodes share this machine's): its
        # workers' folders must not count against the next test.
        for folder in cluster["node_tmp"].glob("jobbench-node-*"):
            shutil.rmtree(folder, ignore_errors=True)
        cluster["made"].remove_node(second, allow_graceful=False)
        cluster["second"] = cluster["made"].add_node(
            num_cpus=NODE_CPUS, node_ip_address="127.0.0.1"
        )
        cluster["made"].wait_for_nodes()


def test_a_node_lost_mid_rep_is_reported_and_leaves_nothing(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    proc = start_jobbench(
        "run", "--cluster", cluster["address"], "-w", "2", "-s", "4", "--burst", "400",
        "--job-seconds", "0.5", *FAST, "--reps", "2", "-o", str(tmp_path / "out"),
        "--label", "lost",
        cwd=tmp_path, env={**cluster["env"], "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    key = key_of_a_worker(cluster)
    said = Stderr(proc)
    said.wait_for("rep 1/2")
    # Not a fixed sleep: on a loaded machine the burst reached the second node's worker more
    # than a second after "rep 1/2", and the node went holding nothing to lose.
    until_every_worker_holds_jobs(cluster, key, workers=2)
    second = cluster["second"]
    second_id = second.node_id
    second.kill_raylet()
    assert proc.wait(120) == 4, str(said)
    assert proc.stdout is not None
    out, err = proc.stdout.read(), str(said)
    # Ray's messages on the lost node (its raylet's log tail) go to stderr, never into stdout,
    # which is --json's document.
    assert "(raylet)" not in out, out
    line = f"node {second_id[:12]} (127.0.0.1)"
    assert f"on {line} was lost with its node" in err, err
    doc = json.loads((tmp_path / "out" / "lost.json").read_text())
    assert doc["complete"] is False and line in doc["error"]
    rep = doc["scenarios"][0]["reps"][0]
    assert rep["partial"] == "worker died"
    jobs = rep["jobs"]
    assert jobs["lost"] == len(rep["lost_jobs"]) > 0, jobs  # what the lost workers held
    assert jobs["completed"] + jobs["unfinished"] == 400, jobs
    assert len(doc["scenarios"][0]["reps"]) == 1  # the run ended there
    # The logs came back from the node that stayed: its workers' logs and folders are in the
    # folder the error names; the lost node's went with it.
    kept = Path(err.split("see the workers' logs in ")[1].split()[0].rstrip(";"))
    assert kept.parent == tmp_path  # the driver's workdir, not a node's folder
    placed = doc["environment"]["cluster"]
    assert placed["address"] == cluster["address"] and placed["queue_host"] == "127.0.0.1"
    assert placed["worker_cpus"] == 1 and len(placed["nodes"]) == 2
    assert sorted(len(node["workers"]) for node in placed["nodes"]) == [1, 1]  # SPREAD
    stayed = next(n for n in doc["environment"]["cluster"]["nodes"] if n["id"] != second_id)
    lost = next(n for n in doc["environment"]["cluster"]["nodes"] if n["id"] == second_id)
    assert stayed["workers"] and lost["workers"]
    for worker_id in stayed["workers"]:
        assert (kept / f"{worker_id}.log").is_file(), list(kept.iterdir())
        assert (kept / worker_id / "home").is_dir()
    for worker_id in lost["workers"]:
        assert not (kept / f"{worker_id}.log").exists()
    assert_key_nowhere(key, tmp_path, kept, printed=out + err)
    assert_nothing_left(cluster, lost=lost["workers"])
