"""Workers isolated like containers: each worker process of `jobbench run` has its own working
directory `<workdir>/<worker id>/` with its own tmp/ (TMPDIR, TMP, TEMP) and home/ (HOME), and
the folder the user runs jobbench in gets nothing but the results. Real processes: a user
command (relative paths, as a user types them) and the model worker; loopback only."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psutil

from tests.e2e.helpers import run_jobbench, start_jobbench

FAST = ["--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2", "--no-pin-queue"]
RUN = ["run", "--workers", "2", "--slots", "4", "--job-seconds", "0.05", "--reps", "1", *FAST]

# Says where it runs, writes into its working directory and temp folder, then is a model worker.
PROBE = """
import json, os, sys, tempfile
from pathlib import Path

Path("written-by-the-worker.txt").write_text("in its own folder")
with tempfile.NamedTemporaryFile(delete=False) as handle:
    temp_file = handle.name
facts = {
    "cwd": os.getcwd(),
    "home": str(Path.home()),
    "temp_dirs": [os.environ[name] for name in ("TMPDIR", "TMP", "TEMP")],
    "temp_file": temp_file,
    "data": Path(sys.argv[2]).read_text(),
}
Path(sys.argv[1], os.environ["RUNPOD_POD_ID"] + ".json").write_text(json.dumps(facts))
os.execv(sys.executable, [sys.executable, "-m", "jobbench.workers.policy_worker"])
"""


def own_folders(worker_id: str, cwd: str, home: str, temp_dirs: list[str], tmp: Path) -> None:
    """`cwd` is the worker's own folder in a run's workdir (a jobbench-* folder of TMPDIR), HOME
    and every temp variable in it."""
    folder = Path(cwd)
    assert folder.name == worker_id and folder.parent.parent == tmp, cwd
    assert folder.parent.name.startswith("jobbench-"), cwd
    assert home == str(folder / "home") and temp_dirs == [str(folder / "tmp")] * 3


def test_a_user_command_runs_in_its_own_folder_with_its_relative_paths_resolved(
    tmp_path: Path,
) -> None:
    user, facts, tmp = tmp_path / "user", tmp_path / "facts", tmp_path / "tmp"
    for folder in (user, facts, tmp):
        folder.mkdir()
    (user / "probe_worker.py").write_text(PROBE)
    (user / "data.txt").write_text("the user's data")
    worker = f"{sys.executable} probe_worker.py {facts} data.txt"  # relative, as typed in user/
    result = run_jobbench(
        *RUN, "--burst", "8", "--worker", worker, cwd=user, env={"TMPDIR": str(tmp)}
    )
    assert result.returncode == 0, result.stderr
    seen = {path.stem: json.loads(path.read_text()) for path in facts.glob("*.json")}
    assert len(seen) == 2
    for worker_id, fact in seen.items():
        own_folders(worker_id, fact["cwd"], fact["home"], fact["temp_dirs"], tmp)
        assert Path(fact["temp_file"]).parent == Path(fact["cwd"]) / "tmp"
        assert fact["data"] == "the user's data"
    assert len({fact["cwd"] for fact in seen.values()}) == 2
    assert sorted(p.name for p in user.iterdir()) == ["data.txt", "probe_worker.py", "reports"]
    assert not list(tmp.iterdir())  # a run that succeeded removes its workdir


def test_model_workers_run_in_their_own_folders_and_leave_the_users_untouched(
    tmp_path: Path,
) -> None:
    user, tmp = tmp_path / "user", tmp_path / "tmp"
    user.mkdir()
    tmp.mkdir()
    args = [*RUN, "--burst", "64", "--worker", "model"]
    proc = start_jobbench(*args, cwd=user, env={"TMPDIR": str(tmp)})
    assert proc.stderr is not None
    for line in proc.stderr:  # every worker polling: a rep is under way
        if "rep 1/1" in line:
            break
    workers = [
        child
        for child in psutil.Process(proc.pid).children()
        if "jobbench.workers.policy_worker" in child.cmdline()
    ]
    for worker in workers:
        env = worker.environ()
        temp_dirs = [env[name] for name in ("TMPDIR", "TMP", "TEMP")]
        own_folders(env["RUNPOD_POD_ID"], worker.cwd(), env["HOME"], temp_dirs, tmp)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert len(workers) == 2 and len({worker.pid for worker in workers}) == 2
    assert [p.name for p in user.iterdir()] == ["reports"]
