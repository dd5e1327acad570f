"""`jobbench serve`: the fake queue in the foreground until Ctrl-C, the same command as
`python -m fake_queue` (fake_queue.command), from the same options (fake_queue.options).
"""

from __future__ import annotations

from fake_queue.api import serve
from fake_queue.options import ServeOptions
from jobbench.errors import EXIT_OK, Interrupted


def serve_command(options: ServeOptions) -> int:
    """Serve until SIGINT or SIGTERM, then exit 130 as every jobbench command a signal ends
    (`python -m fake_queue` exits 0: a clean end is the only one it has); 2 when the settings
    or the port are unusable."""
    code = serve(options)
    return Interrupted.exit_code if code == EXIT_OK else code
