"""The jobbench CLI in this process: `main()` with an argv, as the `jobbench` script calls it."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from jobbench.cli import main


def run_cli(monkeypatch: pytest.MonkeyPatch, *args: str, cwd: Path) -> int:
    """The exit code of `jobbench ARGS` run in `cwd` (CI=true, as tests/e2e run it)."""
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(sys, "argv", ["jobbench", *args])
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(SystemExit) as exited:
            main()
    finally:  # main() leaves them ignored, for the exit that follows it: this process goes on
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    code = exited.value.code
    assert isinstance(code, int), code
    return code
