"""`jobbench run` end to end: real processes, the result document the checks read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from jobbench.render.words.explain import OWN_INPUTS_LEGEND, OWN_INPUTS_LINE
from tests.e2e.helpers import run_jobbench

FAST = ["--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2"]


def run_json(*args: str, cwd: Path) -> tuple[dict[str, Any], str]:
    result = run_jobbench("run", "--json", *args, cwd=cwd, timeout_s=180)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def test_run_with_real_sdk_workers_writes_the_documented_result(tmp_path: Path) -> None:
    doc, _ = run_json(
        "--workers",
        "2",
        "--slots",
        "8",
        "--burst",
        "32",  # two full waves a worker: the 1 s re-check between them is what is checked
        "--job-seconds",
        "0.05",
        "--reps",
        "2",
        "--label",
        "sdk",
        *FAST,
        cwd=tmp_path,
    )
    saved = json.loads((tmp_path / "reports" / "sdk.json").read_text())
    assert saved == doc  # --json prints exactly the saved document
    assert doc["schema"] == "jobbench.result/1" and doc["complete"] is True
    assert doc["environment"]["runpod"] == "1.12.0"
    cpus = sorted(os.sched_getaffinity(0))  # this machine has >= 2: the queue gets one alone
    assert doc["environment"]["cpu_plan"] == {"queue": cpus[-1:], "workers": cpus[:-1]}
    assert doc["target"] == {"kind": "fake", "endpoint": "embedded"}
    (scenario,) = doc["scenarios"]
    assert scenario["params"]["workers"] == 2 and scenario["params"]["slots"] == 8
    assert abs(scenario["ideal_s"] - (0.005 + 2 * 0.05)) < 1e-9
    assert len(scenario["reps"]) == 2
    for rep in scenario["reps"]:
        assert rep["jobs"]["submitted"] == 32 and rep["jobs"]["completed"] == 32
        assert rep["jobs"]["failed"] == rep["jobs"]["cancelled"] == rep["jobs"]["timed_out"] == 0
        for phase in ("queue_wait", "service", "e2e"):
            assert set(rep["phases"][phase]) == {"p50", "p90", "p99", "max", "mean"}
        assert sum(rep["split"]["jobs_per_worker"].values()) == 32
        assert len(rep["split"]["jobs_per_worker"]) == 2
        assert abs(rep["efficiency"] - rep["ideal_s"] / rep["time_to_p99_s"]) < 1e-5
    # SDK 1.12.0, from the event log: full batches of 8, and a worker's next take only after
    # its 1 s re-check (how long that makes a rep: benchmarks/reference_table.py)
    logged = (tmp_path / "reports" / "sdk.events.jsonl").read_text().splitlines()
    for number in (1, 2):
        takes = [e for line in logged if (e := json.loads(line))["rep"] == number]
        takes = [e for e in takes if e["ev"] == "take" and e["got"] > 0]
        assert [e["got"] for e in takes] == [8] * 4
        for worker in {e["worker"] for e in takes}:
            own = sorted((e for e in takes if e["worker"] == worker), key=lambda e: e["arrived"])
            assert all(b["arrived"] - a["t"] >= 999_000 for a, b in pairwise(own))  # µs
    for rep in scenario["reps"]:  # a job-done a job, and the takes: 4 with jobs, a few empty
        requests = rep["requests"]
        assert requests["posts"] == 32 and requests["refused"] == 0
        assert 4 <= requests["takes"] <= 8 and 1.1 <= requests["per_job"] <= 1.25
    p99 = scenario["summary"]["time_to_p99_s"]
    assert p99["min"] <= p99["median"] <= p99["max"]
    lines = (tmp_path / "reports" / "sdk.events.jsonl").read_text().splitlines()
    assert {json.loads(line)["rep"] for line in lines} == {1, 2}


def test_a_rep_counts_the_workers_requests_per_completed_job(tmp_path: Path) -> None:
    """One drain worker of 8 slots and a burst of 32 jobs, in real processes: a take a batch of
    8 (the one waiting for more when the last job ends is not in the rep's log) and a job-done
    a job, so about one request and an eighth per job; the summary is over the reps."""
    doc, _ = run_json(
        "--worker", "model", "--policy", "drain", "--workers", "1", "--slots", "8",
        "--burst", "32", "--job-seconds", "0.02", "--reps", "3", "--label", "requests",
        *FAST, cwd=tmp_path,
    )  # fmt: skip
    (scenario,) = doc["scenarios"]
    values = []
    for rep in scenario["reps"]:
        requests = rep["requests"]
        assert requests["takes"] == rep["takes"]["count"]
        assert 4 <= requests["takes"] <= 5  # a poll whose hold ran out in the rep at most
        assert requests["posts"] == 32 and requests["refused"] == 0
        assert requests["per_job"] == round((requests["takes"] + 32) / 32, 6)
        values.append(requests["per_job"])
    summary = scenario["summary"]["requests_per_job"]
    assert (summary["min"], summary["max"]) == (min(values), max(values))
    assert sorted(values)[1] == summary["median"]
    page = run_jobbench("report", "requests", "--html", "page.html", cwd=tmp_path)
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "page.html").read_text()
    row = html[html.index("requests per job</") :].split("</tr>")[0]
    assert f">{summary['median']:.3f}<" in row


def test_run_user_command_gets_inputs_and_runpod_env(tmp_path: Path) -> None:
    handler = tmp_path / "echo_handler.py"
    affinity = tmp_path / "affinity.json"
    handler.write_text(
        "import asyncio, json, os, runpod\n"
        f"open({str(affinity)!r}, 'w').write(json.dumps(sorted(os.sched_getaffinity(0))))\n"
        "async def handler(job):\n"
        "    await asyncio.sleep(job['input']['seconds'])\n"
        "    return {'tag': job['input']['tag'], 'pod': os.environ['RUNPOD_POD_ID']}\n"
        "if __name__ == '__main__':\n"
        "    runpod.serverless.start({'handler': handler, 'concurrency_modifier': lambda _: 8})\n"
    )  # a slot a job: the burst in one take (the SDK re-checks a full worker once a second)
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"seconds": 0.01, "tag": "a"}\n{"seconds": 0.02, "tag": "b"}\n')
    doc, stderr = run_json(
        "--worker",
        f"{sys.executable} {handler}",
        "--workers",
        "1",
        "--slots",
        "8",
        "--burst",
        "8",
        "--inputs",
        str(inputs),
        "--reps",
        "1",
        "--no-events",
        *FAST,
        cwd=tmp_path,
    )
    rep = doc["scenarios"][0]["reps"][0]
    assert rep["jobs"]["completed"] == 8
    assert doc["scenarios"][0]["params"]["worker"].endswith("echo_handler.py")
    assert not (tmp_path / "reports" / "run.events.jsonl").exists()
    assert "rep 1/1" in stderr  # sparse plain progress when not a TTY
    # the worker runs on the CPUs the plan gave workers, never on the queue's
    assert json.loads(affinity.read_text()) == doc["environment"]["cpu_plan"]["workers"]


def test_a_run_of_the_users_inputs_says_their_length_is_unknown(tmp_path: Path) -> None:
    """A handler that returns at once on the user's input: no ideal or efficiency from
    --job-seconds, a length the run never used, in the output, the result or the page."""
    result = run_jobbench(
        "run", "--worker", "model", "--input", '{"x": 1}', "--workers", "1", "--slots", "4",
        "--burst", "16", "--reps", "1", *FAST, "--html", "page.html", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    said = " ".join((result.stdout + result.stderr).split())  # the terminal's lines wrap
    assert "x 4 slots; 16 jobs (your inputs); 1 reps" in said and "0.5 s jobs" not in said
    assert OWN_INPUTS_LINE in said and OWN_INPUTS_LEGEND in said
    rest = said.replace(OWN_INPUTS_LINE, "").replace(OWN_INPUTS_LEGEND, "")
    assert "efficiency" not in rest and "ideal" not in rest, said
    doc = json.loads((tmp_path / "reports" / "run.json").read_text())
    (scenario,) = doc["scenarios"]
    assert scenario["params"]["inputs"] == 1 and scenario["ideal_s"] is None
    assert scenario["summary"]["efficiency"] is None
    (rep,) = scenario["reps"]
    assert rep["jobs"]["completed"] == 16
    assert rep["ideal_s"] is None and rep["efficiency"] is None
    assert rep["time_to_p99_s"] > 0  # measured, as ever
    assert scenario["predicted"]["efficiency"] is None  # the simulated run has none either
    page = (tmp_path / "page.html").read_text()
    assert "16 jobs (your inputs)" in page and "<dt>job length</dt>" in page
    assert "<dt>ideal</dt>" not in page and "<dt>efficiency</dt>" not in page


def test_run_against_an_already_running_queue_with_server(tmp_path: Path) -> None:
    queue = subprocess.Popen(
        [sys.executable, "-m", "fake_queue", "--port", "0", "--ready-json", "--api-key", "s3cret"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert queue.stdout is not None
        url = json.loads(queue.stdout.readline())["url"]
        doc, _ = run_json(
            "--server",
            url,
            "--api-key",
            "s3cret",
            "--worker",
            "model",
            "--policy",
            "take-ahead",
            "--take-ahead",
            "8",
            "--python",
            sys.executable,
            "--workers",
            "2",
            "--slots",
            "8",
            "--burst",
            "64",
            "--job-seconds",
            "0.05",
            "--reps",
            "1",
            *FAST,
            cwd=tmp_path,
        )
    finally:
        queue.terminate()
        queue.wait(10)
    rep = doc["scenarios"][0]["reps"][0]
    assert rep["jobs"]["completed"] == 64 and doc["target"]["endpoint"] == url
    # the take-ahead policy ran: from the event log, takes that got jobs while slots were busy
    logged = [json.loads(line) for line in (tmp_path / "reports" / "run.events.jsonl").open()]
    assert any(e["ev"] == "take" and e["in_progress"] and e["got"] > 0 for e in logged)
    assert "s3cret" not in json.dumps(doc)
    assert doc["environment"]["cpu_plan"] is None  # no embedded queue to give a CPU


@pytest.mark.parametrize("target", ["fake", "sim"])
def test_every_rep_starts_with_takes_sent_after_the_rep_before(tmp_path: Path, target: str) -> None:
    # A job cache (runpod-python #429) takes while its last jobs run, asking 3 x the slots then
    # free, and the queue holds that take: left waiting, it would start the next rep with 6
    # jobs (the pause between reps, 0.3 s here and a whole rep in a compare, is under the
    # hold). Renewed between reps, every rep's first take is an idle worker's: 3 x 8 slots.
    # The simulator runs each rep after one it forgets, as the fake target's rep before.
    run_json(
        "--worker", "model", "--policy", "job-cache", "--workers", "1", "--slots", "8",
        "--burst", "30", "--job-seconds", "0.1", "--reps", "2", "--events", *FAST[:4],
        "--hold", "20", "--label", "cache", "--target", target, cwd=tmp_path,
    )  # fmt: skip
    takes: dict[int, list[dict[str, Any]]] = {}
    for line in (tmp_path / "reports" / "cache.events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["ev"] == "take":
            takes.setdefault(event["rep"], []).append(event)
    assert sorted(takes) == [1, 2]
    for rep, seen in takes.items():
        first = min(seen, key=lambda e: e["arrived"])
        assert (first["asked"], first["got"], first["in_progress"]) == (24, 24, False), rep


def test_run_prints_its_figures_in_bencher_metric_format(tmp_path: Path) -> None:
    """`--format bmf`: stdout is one BMF document (the shape: tests/unit/test_dashboard_formats.py)
    with the run's row and its figures; the result is saved as always. A format it does not
    know is a usage error before anything runs."""
    args = ["run", "--worker", "model", "--workers", "1", "--slots", "4", "--burst", "8"]
    args += ["--job-seconds", "0.02", "--reps", "2", *FAST]
    done = run_jobbench(*args, "--format", "bmf", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    bmf = json.loads(done.stdout)
    (row,) = bmf
    assert row == "1w-8j-0.02s" and bmf[row]["time-to-p99-s"]["value"] > 0
    saved = json.loads((tmp_path / "reports" / "run.json").read_text())
    reps = saved["scenarios"][0]["reps"]
    # A rep the tests beside it disturbed (saturated) is left out, as the run's summary does.
    clean = [r for r in reps if all(a["kind"] != "saturated" for a in r.get("anomalies", []))]
    p99 = sorted(rep["time_to_p99_s"] for rep in clean or reps)
    assert bmf[row]["time-to-p99-s"]["lower_value"] == p99[0]
    assert bmf[row]["time-to-p99-s"]["upper_value"] == p99[-1]
    wrong = run_jobbench(*args, "--format", "yaml", "--label", "other", cwd=tmp_path)
    assert wrong.returncode == 2
    assert wrong.stderr.strip().splitlines()[-1].startswith("error: --format yaml: use one of")
    assert not (tmp_path / "reports" / "other.json").exists()
