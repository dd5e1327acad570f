"""CLI conventions a shell user expects: -h beside --help on every command, --version."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobbench import __version__
from tests.unit.cli import run_cli

COMMANDS = ["run", "compare", "gate", "report", "serve", "workers", "locust"]


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_dash_h_is_help_for_the_app_and_every_command(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
) -> None:
    args = [command, "-h"] if command else ["-h"]
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == 0
    out = capsys.readouterr().out
    usage = out.splitlines()[0]  # the program's name in-process is pytest's
    expected = f" {command} [OPTIONS]" if command else " [OPTIONS] COMMAND [ARGS]..."
    assert usage.startswith("Usage: ") and expected in usage
    assert "-h, --help" in out
    assert not any(tmp_path.iterdir())  # help starts and writes nothing


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_prints_the_package_version(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str
) -> None:
    assert run_cli(monkeypatch, flag, cwd=tmp_path) == 0
    assert capsys.readouterr().out == f"jobbench {__version__}\n"
