"""The real runpod SDK worker running jobbench's bench handler.

Run as a script (`python .../runpod_entry.py`), so it needs only `runpod` in the worker's
environment: the script's own folder is first on sys.path and holds bench_handler.py and
policies.py. Config from env, under the names policies.py gives: JOBBENCH_SLOTS (the
`concurrency_modifier`) and JOBBENCH_TAKE_AHEAD (the `take_ahead` config key, for an SDK build
that has take-ahead). An SDK build may read K from its own variable instead, RUNPOD_TAKE_AHEAD
(design.md section 5 passes both), so this process sets that one for the SDK it imports.
"""

from __future__ import annotations

import os
from typing import Any

SDK_TAKE_AHEAD_ENV = "RUNPOD_TAKE_AHEAD"  # the SDK's own name, read by the SDK, not by jobbench

try:
    from bench_handler import bench_handler  # type: ignore[import-not-found,unused-ignore]
    from policies import (  # type: ignore[import-not-found,unused-ignore]
        DEFAULT_SLOTS,
        SLOTS_ENV,
        TAKE_AHEAD_ENV,
    )
except ImportError:  # imported as part of the package (tests, type checking)
    from jobbench.workers.bench_handler import bench_handler
    from jobbench.workers.policies import DEFAULT_SLOTS, SLOTS_ENV, TAKE_AHEAD_ENV


def config_from_env() -> dict[str, Any]:
    slots = int(os.environ.get(SLOTS_ENV, str(DEFAULT_SLOTS)))
    config: dict[str, Any] = {
        "handler": bench_handler,
        # A fixed modifier: the worker runs `slots` jobs at once from its first take.
        "concurrency_modifier": lambda _current: slots,
    }
    take_ahead = int(os.environ.get(TAKE_AHEAD_ENV, "0"))
    if take_ahead:
        config["take_ahead"] = take_ahead
    return config


def export_sdk_take_ahead() -> None:
    """RUNPOD_TAKE_AHEAD for the SDK from JOBBENCH_TAKE_AHEAD, unless a variant's env set it: a
    build that reads the variable, not the config key, must not run without take-ahead unseen."""
    take_ahead = int(os.environ.get(TAKE_AHEAD_ENV, "0"))
    if take_ahead:
        os.environ.setdefault(SDK_TAKE_AHEAD_ENV, str(take_ahead))


if __name__ == "__main__":
    export_sdk_take_ahead()
    import runpod

    runpod.serverless.start(config_from_env())
