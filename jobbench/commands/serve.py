"""`jobbench serve`: the fake queue in the foreground until Ctrl-C, the same command as
`python -m fake_queue` (fake_queue.command), from the same options (fake_queue.options).
"""

from __future__ import annotations

from fake_queue.command import serve
from fake_queue.options import ServeOptions


def serve_command(options: ServeOptions) -> int:
    """Serve until SIGINT or SIGTERM: 0, or 2 when the settings or the port are unusable."""
    return serve(options)
