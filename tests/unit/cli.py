"""The jobbench CLI in this process: `main()` with an argv, as the `jobbench` script calls it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jobbench.cli import main


def run_cli(monkeypatch: pytest.MonkeyPatch, *args: str, cwd: Path) -> int:
    """The exit code of `jobbench ARGS` run in `cwd` (CI=true, as tests/e2e run it)."""
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(sys, "argv", ["jobbench", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    code = exited.value.code
    assert isinstance(code, int), code
    return code
