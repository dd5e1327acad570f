"""What a fresh interpreter imports: checked in a process of its own, since the test process
has long imported everything."""

from __future__ import annotations

import subprocess
import sys

from fake_queue.api import STDLIB_ONLY_MODULES


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


def _loaded(imports: str, prefix: str) -> set[str]:
    names = f"m for m in sys.modules if m.startswith('{prefix}')"
    code = f"import sys, {imports}; print(' '.join({names}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_the_fake_queues_surface_loads_no_http_face() -> None:
    # fake_queue.api's serve imports the server when it is called, so the simulator and the
    # scenario's configs, which import the surface, never pay for aiohttp.
    assert _loaded("fake_queue.api", "aiohttp") == set()
    assert _loaded("fake_queue.api", "fake_queue.http") == set()


def test_the_cli_starts_on_the_fake_queues_stdlib_only_modules() -> None:
    # The CLI reads its flags' help from fake_queue at every start: only from the modules of its
    # surface that are on the standard library alone.
    packages = {"fake_queue", "fake_queue.queue"}
    stdlib_only = set(STDLIB_ONLY_MODULES)
    loaded = _loaded("jobbench.cli", "fake_queue")
    assert loaded - packages <= stdlib_only and loaded & stdlib_only
