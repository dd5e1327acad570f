"""History, never loss, end to end: a good run, a failing one that must not replace it, a second
good run that archives the first, and `compare run~1 run` reading both. Real CLI, real
workers, loopback only."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.helpers import run_jobbench

FAST = ["--take-latency", "0.01", "--wake-latency", "0.01"]
GOOD = ["--worker", "model", "--workers", "1", "--burst", "16", "--job-seconds", "0.05"]
# A worker that dies at start (its script imports what is not there): the run fails, exit 4.
BROKEN_HANDLER = "import no_such_module_xyz\n"
BROKEN = ["--worker", f"{sys.executable} broken_handler.py", "--workers", "1", "--slots", "1"]


def jobbench(*args: str, cwd: Path, code: int = 0) -> str:
    result = run_jobbench(*args, cwd=cwd, timeout_s=120)
    assert result.returncode == code, result.stderr
    return result.stderr


def test_a_failed_run_keeps_the_good_result_and_the_next_run_archives_it(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    jobbench("run", *GOOD, "--reps", "1", *FAST, cwd=tmp_path)
    good = {name: (reports / name).read_bytes() for name in ("run.json", "run.events.jsonl")}

    (tmp_path / "broken_handler.py").write_text(BROKEN_HANDLER)
    stderr = jobbench("run", *BROKEN, "--reps", "1", *FAST, cwd=tmp_path, code=4)
    assert {name: (reports / name).read_bytes() for name in good} == good  # byte for byte
    failed = json.loads((reports / "run.failed.json").read_text())
    assert failed["complete"] is False and "no_such_module_xyz" in failed["error"]
    error = stderr.strip().splitlines()[-1]
    assert error.endswith(
        "result saved in reports/run.failed.json (no rep ran: reports/run.json, an earlier run, "
        "kept)"
    ), stderr

    jobbench("run", *GOOD, "--reps", "2", *FAST, cwd=tmp_path)
    history = reports / "history" / "run"
    assert (history / "0001.json").read_bytes() == good["run.json"]
    assert (history / "0001.events.jsonl").read_bytes() == good["run.events.jsonl"]
    assert sorted(p.name for p in history.iterdir()) == ["0001.events.jsonl", "0001.json"]

    result = run_jobbench("compare", "run~1", "run", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    comparison = json.loads(result.stdout)
    assert comparison["baseline"]["path"] == "history/run/0001.json"
    assert comparison["candidate"]["path"] == "run.json"
    assert [row["reps"] for row in comparison["rows"]] == [{"baseline": 1, "candidate": 2}]

    listed = run_jobbench("history", "run", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    refs = [line.split()[0] for line in listed.stdout.splitlines()[1:]]
    assert refs == ["run~0", "run~1", "run.failed"]
