"""The install step of the gate action and of the setup action: pip installs the project from
the action's own checkout (`$GITHUB_ACTION_PATH`, the ref in `uses: OWNER/jobbench@REF`) into a
venv of its own, and puts it on PATH for the steps after. The project here is a stand-in for
jobbench with an in-tree build backend and no dependency, so pip needs no network."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.fake_github import FakeGitHub, Runner, annotations, pr_event, serve
from tests.integration.workflow import ROOT, SETUP_ACTION

BACKEND = '''"""A PEP 517 backend without requirements: a wheel of a module and its script."""
import base64, hashlib, zipfile
from pathlib import Path

NAME, VERSION = "tinybench", "0.0.1"


def _line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    info = f"{NAME}-{VERSION}.dist-info"
    files = {
        f"{NAME}.py": b"def main():\\n    print('tinybench ran')\\n",
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n"
            "Provides-Extra: history\\n"
        ).encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\\nGenerator: tiny\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
        ),
        f"{info}/entry_points.txt": f"[console_scripts]\\n{NAME} = {NAME}:main\\n".encode(),
    }
    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        record = [_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
        archive.writestr(f"{info}/RECORD", "\\n".join(record) + "\\n")
    return wheel
'''
PYPROJECT = """[build-system]
requires = []
build-backend = "tiny_backend"
backend-path = ["."]
"""


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    yield from serve()


@pytest.fixture
def action_root(tmp_path: Path) -> Path:
    """A checkout of the action at some ref: its scripts, and a project to install."""
    root = tmp_path / "actions" / "OWNER" / "jobbench" / "v1"
    shutil.copytree(ROOT / "action", root / "action")
    (root / "setup").mkdir()
    (root / "tiny_backend.py").write_text(BACKEND)
    (root / "pyproject.toml").write_text(PYPROJECT)
    return root


def installed(run: Runner) -> Path:
    """The venv's bin folder the step put on PATH, checked to run the installed script."""
    (added,) = run.path_file.read_text().splitlines()
    bin_dir = Path(added)
    assert bin_dir == run.temp / "jobbench-action" / "venv" / "bin"
    ran = subprocess.run([bin_dir / "tinybench"], capture_output=True, text=True, check=True)
    assert ran.stdout == "tinybench ran\n"
    return bin_dir


def origin(bin_dir: Path) -> str:
    """Where pip says the installed project came from (PEP 610's direct_url.json)."""
    (found,) = bin_dir.parent.glob("lib/python*/site-packages/tinybench-*.dist-info")
    url: str = json.loads((found / "direct_url.json").read_text())["url"]
    return url


def test_the_gate_action_installs_from_its_own_checkout(
    tmp_path: Path, github: FakeGitHub, action_root: Path
) -> None:
    run = Runner(tmp_path, github.url, pr_event())
    done = run.run("Install jobbench", env={"GITHUB_ACTION_PATH": str(action_root)}, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert origin(installed(run)) == action_root.as_uri()


def test_the_setup_action_installs_the_extras_asked_for(
    tmp_path: Path, github: FakeGitHub, action_root: Path
) -> None:
    run = Runner(tmp_path, github.url, {})
    done = run.run(
        "Install jobbench",
        {"extras": "history"},
        {"GITHUB_ACTION_PATH": str(action_root / "setup")},
        action=SETUP_ACTION,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"installed {action_root}[history] into" in done.stdout
    assert origin(installed(run)) == action_root.as_uri()


@pytest.mark.parametrize("extras", ["history; rm -rf /", "history,", "../other", "Hist"])
def test_extras_that_are_no_list_of_names_are_refused(
    tmp_path: Path, github: FakeGitHub, action_root: Path, extras: str
) -> None:
    run = Runner(tmp_path, github.url, {})
    done = run.run(
        "Install jobbench",
        {"extras": extras},
        {"GITHUB_ACTION_PATH": str(action_root / "setup")},
        action=SETUP_ACTION,
    )
    assert done.returncode == 2
    assert annotations(done.stdout) == [
        f"::error title=jobbench action install::input extras: {extras!r} is not a list of "
        "extras; e.g. history,locust"
    ]
    assert not (run.temp / "jobbench-action" / "venv").exists()


def test_a_failed_install_says_so_in_one_line(
    tmp_path: Path, github: FakeGitHub, action_root: Path
) -> None:
    (action_root / "pyproject.toml").write_text(PYPROJECT.replace("tiny_backend", "no_backend"))
    run = Runner(tmp_path, github.url, pr_event())
    done = run.run("Install jobbench", env={"GITHUB_ACTION_PATH": str(action_root)}, timeout=180)
    assert done.returncode == 1
    assert annotations(done.stdout) == [
        f"::error title=jobbench action install::pip install {action_root} failed (above)"
    ]
    assert not run.path_file.exists()  # nothing put on PATH
