"""Locust is an extra: without it `jobbench locust` says which one, in one line, before anything
starts; nothing else of jobbench needs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# The jobbench script's entry point in an interpreter where `import locust` fails, as it does
# where the extra is not installed (None in sys.modules: Python's own way to block an import).
WITHOUT_LOCUST = (
    "import sys; sys.modules['locust'] = None; from jobbench.cli import main; "
    "sys.argv = ['jobbench', *sys.argv[1:]]; main()"
)


def jobbench_without_locust(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_LOCUST, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_jobbench_locust_without_locust_names_the_extra(tmp_path: Path) -> None:
    done = jobbench_without_locust(tmp_path, "locust", "--headless", "--run-time", "5s")
    assert done.returncode == 2
    assert done.stderr == "error: jobbench locust needs Locust: pip install 'jobbench[locust]'\n"
    assert done.stdout == "" and list(tmp_path.iterdir()) == []  # no queue, no report


def test_the_other_commands_run_without_locust(tmp_path: Path) -> None:
    done = jobbench_without_locust(
        tmp_path,
        "run",
        "--worker",
        "model",
        "--workers",
        "1",
        "--burst",
        "4",
        "--reps",
        "1",
        "--job-seconds",
        "0.01",
        "--take-latency",
        "0.01",
        "--quiet",
    )
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "reports").glob("*.json"))
