"""The cluster checks past the test suite's budget (tests/e2e/test_cluster.py keeps a sweep and a
node lost mid-rep): a burst of real runpod workers from an SDK checkout on a path both nodes
share, spread one a node; Ctrl-C of a run on the cluster. On the same real two-node cluster on
127.0.0.1 (the suite's fixture), each run on it costing about 10 s of CPU on this machine:

    python -m pytest -n 0 -p no:cacheprovider benchmarks/cluster      # about a minute
"""

from __future__ import annotations

import json
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import start_jobbench
from tests.e2e.test_cluster import (
    FAST,
    Stderr,
    assert_key_nowhere,
    assert_nothing_left,
    key_of_a_worker,
    two_node_cluster,
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, Any]]:
    """One cluster for this module (run alone: no other test shares the machine here)."""
    with two_node_cluster() as running:
        yield running


def test_a_burst_runs_on_sdk_workers_spread_over_both_nodes_from_a_shared_checkout(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    """Real runpod workers from an SDK checkout (--sdk) on a path the nodes share (here both
    nodes are this machine, as a shared volume mounts it on each): one on each node, each
    importing the runpod package from the checkout, which its marker file says."""
    import runpod

    checkout = tmp_path / "sdk"
    shutil.copytree(Path(runpod.__file__).parent, checkout / "runpod")
    (checkout / "imported-by").mkdir()
    with (checkout / "runpod" / "__init__.py").open("a") as init:
        init.write(
            "\nimport os as _os, pathlib as _pathlib\n"
            "if _os.environ.get('RUNPOD_POD_ID'):\n"
            "    (_pathlib.Path(__file__).parents[1] / 'imported-by'"
            " / _os.environ['RUNPOD_POD_ID']).touch()\n"
        )
    proc = start_jobbench(
        "run", "--cluster", cluster["address"], "--worker", "runpod", "--sdk", str(checkout),
        "-w", "2", "-s", "4", "--burst", "24", "--job-seconds", "0.05", "--take-latency", "0.01",
        "--wake-latency", "0.01", "--hold", "1", "--reps", "1", "--json",
        "-o", str(tmp_path / "out"), "--label", "spread",
        cwd=tmp_path, env={**cluster["env"], "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    key = key_of_a_worker(cluster)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    doc = json.loads(out)
    placed = doc["environment"]["cluster"]
    assert placed["address"] == cluster["address"] and placed["queue_host"] == "127.0.0.1"
    assert placed["worker_cpus"] == 1
    assert len(placed["nodes"]) == 2
    # SPREAD puts one of the two workers on each node; every worker is on exactly one.
    on_nodes = [node["workers"] for node in placed["nodes"]]
    every = [worker for ids in on_nodes for worker in ids]
    assert sorted(len(ids) for ids in on_nodes) == [1, 1], placed
    assert sorted(every) == [f"2w-24j-0.05s-w{i}" for i in range(2)]
    assert {node["ip"] for node in placed["nodes"]} == {"127.0.0.1"}
    assert sorted(p.name for p in (checkout / "imported-by").iterdir()) == sorted(every)
    for rep in doc["scenarios"][0]["reps"]:
        assert rep["jobs"]["completed"] == 24
        assert sum(rep["split"]["jobs_per_worker"].values()) == 24
        assert all(rep["split"]["jobs_per_worker"][w] > 0 for w in every)
        # The harness's CPU: each worker's group read on its node, summed per node.
        assert (
            set(rep["worker_nodes"]) == set(every) and len(set(rep["worker_nodes"].values())) == 2
        )
        by_node = rep["harness"]["node_worker_cores"]
        assert len(by_node) == 2 and all(v > 0 for v in by_node.values()), rep["harness"]
        assert set(rep["harness"]["worker_cores"]) == set(every)
    assert_key_nowhere(key, tmp_path, printed=out + err)
    assert_nothing_left(cluster)


def test_ctrl_c_stops_every_actor_and_worker(cluster: dict[str, Any], tmp_path: Path) -> None:
    proc = start_jobbench(
        "run", "--cluster", cluster["address"], "-w", "2", "-s", "2", "--burst", "400",
        "--job-seconds", "0.5", *FAST, "--reps", "1", "-o", str(tmp_path / "out"),
        cwd=tmp_path, env={**cluster["env"], "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    err = Stderr(proc)
    err.wait_for("rep 1/1")
    time.sleep(1)  # jobs held by the workers on both nodes
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 130, str(err)
    doc = json.loads((tmp_path / "out" / "run.json").read_text())
    assert doc["interrupted"] is True
    assert_nothing_left(cluster)
    # The placement group went with them: the next test places its workers again.
