"""The distributions a release publishes: `python -m build` makes the sdist, and the wheel from
that sdist, of the files git tracks (as a release checks them out). The wheel holds every module
of jobbench and fake_queue with their py.typed, the `jobbench` command and the metadata pip
resolves by, and nothing of the repository around them."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.workflow import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
NAME, VERSION = PROJECT["name"], PROJECT["version"]


def checkout(into: Path) -> Path:
    """The repository's files as a fresh clone has them (tracked, or new and not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = ROOT / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return into


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The sdist, then the wheel built from it (build's default), with the backend the dev
    extra installs: no network."""
    source = checkout(tmp_path_factory.mktemp("checkout"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
        capture_output=True,
        text=True,
        check=True,
        timeout=180,
    )
    yield out


def package_files() -> set[str]:
    """Every file the two packages are made of, as the repository has them."""
    return {
        str(path.relative_to(ROOT))
        for package in ("jobbench", "fake_queue")
        for path in (ROOT / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_the_wheel_holds_both_packages_whole_and_nothing_else(dist: Path) -> None:
    (wheel,) = dist.glob(f"{NAME}-{VERSION}-py3-none-any.whl")
    info = f"{NAME}-{VERSION}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        metadata = archive.read(f"{info}/METADATA").decode()
    assert {n for n in names if not n.startswith(info + "/")} == package_files()
    assert {"jobbench/py.typed", "fake_queue/py.typed", "jobbench/workers/runpod_entry.py"} <= names
    assert "[console_scripts]\njobbench = jobbench.cli:main" in entry_points
    assert f"Name: {NAME}\nVersion: {VERSION}\n" in metadata
    assert "Requires-Python: >=3.11" in metadata
    assert "Requires-Dist: runpod==1.12.0" in metadata
    assert "Provides-Extra: history" in metadata and "License-Expression: MIT" in metadata


def test_the_sdist_holds_what_a_wheel_is_built_from(dist: Path) -> None:
    (sdist,) = dist.glob(f"{NAME}-{VERSION}.tar.gz")
    top = f"{NAME}-{VERSION}/"
    with tarfile.open(sdist) as archive:
        names = {n.removeprefix(top) for n in archive.getnames()}
    assert {"pyproject.toml", "README.md", "PKG-INFO"} <= names
    assert package_files() <= names
    assert not {n for n in names if n.startswith(("tests/", "benchmarks/", "action/"))}
