"""Tests that need a system program pip cannot install: skipped with a reason naming the program
and how to install it where it is missing (a fresh machine with only Python and pip), and run by
`.ci/run`, which installs them and fails on any skipped test (tests/conftest.py)."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM = "chromium"
NODE = "node"
INSTALL = {
    CHROMIUM: "install it with `apt-get install -y chromium` (Debian's package)",
    NODE: "install it with `apt-get install -y nodejs npm`",
}


def needs(program: str) -> pytest.MarkDecorator:
    """Skip the test where `program` is not on PATH, saying what to install."""
    return pytest.mark.skipif(
        shutil.which(program) is None, reason=f"needs {program}: {INSTALL[program]}"
    )
