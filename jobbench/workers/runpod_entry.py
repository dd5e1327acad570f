"""The real runpod SDK worker running jobbench's bench handler.

Run as a script (`python .../runpod_entry.py`), so it needs only `runpod` in the worker's
environment: the script's own folder is first on sys.path and holds bench_handler.py.
Config from env: JOBBENCH_SLOTS (concurrency_modifier), JOBBENCH_TAKE_AHEAD (take_ahead key).
"""

from __future__ import annotations

import os
from typing import Any

try:
    from bench_handler import bench_handler  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # imported as part of the package (tests, type checking)
    from jobbench.workers.bench_handler import bench_handler


def config_from_env() -> dict[str, Any]:
    slots = int(os.environ.get("JOBBENCH_SLOTS", "32"))
    config: dict[str, Any] = {
        "handler": bench_handler,
        # A fixed modifier: the worker runs `slots` jobs at once from its first take.
        "concurrency_modifier": lambda _current: slots,
    }
    take_ahead = int(os.environ.get("JOBBENCH_TAKE_AHEAD", "0"))
    if take_ahead:
        config["take_ahead"] = take_ahead
    return config


if __name__ == "__main__":
    import runpod

    runpod.serverless.start(config_from_env())
