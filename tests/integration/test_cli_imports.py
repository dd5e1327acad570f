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
