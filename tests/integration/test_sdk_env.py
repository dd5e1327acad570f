"""Each SDK checkout in its own environment (core/sdk/env.py), with real uv and real probes:
a fake checkout whose runpod.serverless imports `jbdep_fake`, a wheel of it written by hand,
and uv kept offline on a folder holding only that wheel."""

from __future__ import annotations

import base64
import hashlib
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from jobbench.core.real_workers.fake_target import FakeTarget
from jobbench.core.scenario.config import Scenario
from jobbench.core.sdk.deps import declared_dependencies
from jobbench.core.sdk.env import env_key, envs_root, with_sdk_env
from jobbench.errors import UsageError
from jobbench.render.text.plain_progress import PlainProgress
from jobbench.workers.kinds import probe_sdk
from jobbench.workers.spec import WorkerSpec
from tests.unit.cli import run_cli


class Said(PlainProgress):
    """Progress that keeps its messages."""

    def __init__(self) -> None:
        super().__init__(quiet=True)
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


def write_wheel(folder: Path, name: str = "jbdep_fake", version: str = "0.1") -> Path:
    """A pure-Python wheel: the module, METADATA, WHEEL and a RECORD of their hashes."""
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": "VALUE = 1\n",
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n"
        ),
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            data = text.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{path},sha256={digest.decode()},{len(data)}")
            archive.writestr(path, data)
        record.append(f"{info}/RECORD,,")
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel


def key_of(checkout: Path) -> str:
    deps = declared_dependencies(checkout)
    assert deps is not None
    return env_key(deps)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runpod checkout that declares `jbdep-fake`; uv offline, finding it in a local folder;
    jobbench's cache in tmp_path."""
    links = tmp_path / "links"
    links.mkdir()
    write_wheel(links)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_FIND_LINKS", str(links))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    sdk = tmp_path / "sdk"
    (sdk / "runpod" / "serverless").mkdir(parents=True)
    (sdk / "runpod" / "__init__.py").write_text("from . import serverless\n")
    (sdk / "runpod" / "serverless" / "__init__.py").write_text("import jbdep_fake\n")
    (sdk / "pyproject.toml").write_text(
        '[project]\nname = "runpod"\nversion = "0"\ndependencies = ["jbdep-fake"]\n'
    )
    return sdk


def test_without_its_env_the_probe_names_the_missing_module(checkout: Path) -> None:
    spec = WorkerSpec("runpod", sdk_path=checkout, python=sys.executable)
    assert with_sdk_env(spec, Said().message) == spec  # --python: no env is built
    with pytest.raises(UsageError) as refused:
        probe_sdk(spec)
    message = str(refused.value)
    assert message.startswith(f"--sdk {checkout}: runpod at {checkout / 'runpod'}")
    assert f"cannot be imported by {sys.executable}: No module named 'jbdep_fake'" in message
    assert "--python" in message and "\n" not in message
    assert not envs_root().exists()


def test_the_run_command_refuses_it_before_anything_runs_or_is_written(
    checkout: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "--worker", "runpod", "--sdk", str(checkout), "--python", sys.executable]
    code = run_cli(monkeypatch, *args, "--workers", "1", "--burst", "4", cwd=tmp_path)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert err[-1].startswith(f"error: --sdk {checkout}: runpod at") and "jbdep_fake" in err[-1]
    assert not list(tmp_path.glob("reports/*.json"))


def test_its_env_is_built_once_then_the_sdk_imports(checkout: Path) -> None:
    said = Said()
    spec = with_sdk_env(WorkerSpec("runpod", sdk_path=checkout), said.message)
    key = key_of(checkout)
    assert spec.python == str(envs_root() / key / "bin" / "python")
    assert said.lines[0] == (
        f"building the environment of runpod-python {checkout} (uv, 1 deps from pyproject.toml)..."
    )
    info = probe_sdk(spec)
    assert info is not None and info["path"] == str(checkout / "runpod")
    assert info["python"] == spec.python
    again = Said()
    assert with_sdk_env(WorkerSpec("runpod", sdk_path=checkout), again.message) == spec
    assert again.lines == []  # cached: nothing built, nothing said
    assert [p.name for p in envs_root().iterdir() if not p.name.startswith(".")] == [key]


def test_a_change_to_the_declared_dependencies_is_a_new_env(checkout: Path) -> None:
    before = key_of(checkout)
    pyproject = checkout / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"jbdep-fake"', '"jbdep-fake>=0.1"'))
    after = key_of(checkout)
    assert after != before
    assert with_sdk_env(WorkerSpec("runpod", sdk_path=checkout), Said().message).python == str(
        envs_root() / after / "bin" / "python"
    )


def test_two_runs_building_the_same_env_at_once_build_it_once(checkout: Path) -> None:
    said = Said()
    got: list[str | None] = []
    runs = [
        threading.Thread(
            target=lambda: got.append(
                with_sdk_env(WorkerSpec("runpod", sdk_path=checkout), said.message).python
            )
        )
        for _ in range(2)
    ]
    for run in runs:
        run.start()
    for run in runs:
        run.join(timeout=60)
    assert len(got) == 2 and got[0] == got[1]
    assert sum(line.startswith("building the environment") for line in said.lines) == 1
    assert [p for p in envs_root().iterdir() if p.is_dir()] == [Path(got[0] or "").parents[1]]


def test_a_dependency_uv_cannot_find_is_one_line_naming_it_and_the_way_out(
    checkout: Path,
) -> None:
    (checkout / "pyproject.toml").write_text(
        '[project]\nname = "runpod"\nversion = "0"\ndependencies = ["jbdep-nowhere"]\n'
    )
    with pytest.raises(UsageError) as failed:
        with_sdk_env(WorkerSpec("runpod", sdk_path=checkout), Said().message)
    message = str(failed.value)
    assert message.startswith(f"--sdk {checkout}: uv could not build the environment")
    assert "jbdep-nowhere" in message and "pass --python PYTHON" in message
    assert "\n" not in message
    assert [p for p in envs_root().iterdir() if p.is_dir()] == []  # no half-built env left


def test_the_fake_queues_preflight_runs_every_variant_on_its_own_env(checkout: Path) -> None:
    """The one step run, compare (git refs, variants with sdk=) and locust share."""
    said = Said()
    target = FakeTarget()
    scenario = Scenario("s", worker=WorkerSpec("runpod", sdk_path=checkout))
    target.preflight([scenario, scenario], said)
    ready = target.ready[scenario.worker]
    assert ready.spec.python is not None and ready.spec.python.startswith(str(envs_root()))
    assert ready.sdk is not None and ready.sdk["python"] == ready.spec.python
    assert sum(line.startswith("building") for line in said.lines) == 1


def test_an_env_whose_python_is_gone_is_built_again(checkout: Path) -> None:
    spec = with_sdk_env(WorkerSpec("runpod", sdk_path=checkout), Said().message)
    assert spec.python is not None
    Path(spec.python).unlink()  # as when its base interpreter was removed
    said = Said()
    assert with_sdk_env(WorkerSpec("runpod", sdk_path=checkout), said.message) == spec
    assert said.lines[0].startswith("building the environment")
    assert probe_sdk(spec) is not None
