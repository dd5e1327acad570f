"""What a fresh interpreter imports: checked in a process of its own, since the test process
has long imported everything."""

from __future__ import annotations

import subprocess
import sys


def test_the_cli_process_never_imports_locust_or_gevent() -> None:
    code = (
        "import sys, jobbench.cli, jobbench.commands.locust, jobbench.commands.run, "
        "jobbench.commands.workers; print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('locust', 'gevent')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_cli_builds_every_commands_flags_without_the_heavy_libraries() -> None:
    """Every command's flags are read from its request when the CLI starts (-h included), so a
    request's module imports what it derives from heavier parts only where it derives it."""
    code = (
        "import sys, jobbench.cli, typer; typer.main.get_command(jobbench.cli.app); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pydantic', 'numpy', 'aiohttp', 'asyncio', 'rich')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
