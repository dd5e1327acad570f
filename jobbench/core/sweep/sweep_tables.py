"""A `[sweeps.NAME]` table of jobbench.toml (or pyproject's [tool.jobbench.sweeps.NAME]): a
sweep's flags as TOML keys, e.g. `workers = [1, 2, 4, 8]`, `slots = "8..32+8"`,
`take_latency = [0.1, "uniform:0.1,0.3"]`, `load = ["rate:40/s:for:30s", "burst:512"]`,
`burst = 256`. Read here into the flags' text;
`jobbench sweep NAME` takes them, and a flag given on the command line wins over its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jobbench.core.scenario.project import FIXED_TAKE_S, load_project
from jobbench.errors import UsageError
from jobbench.workers.policies import DRAIN, JOB_CACHE, SDK_112, SDK_TAKE_AHEAD, TAKE_AHEAD

AXIS_KEYS = ("workers", "slots", "take_ahead", "job_seconds", "policy")
LATENCY_KEYS = ("take_latency", "wake_latency", "load", "autoscale")  # each item one flag's value
TEXT_KEYS = ("hold", "done_latency")
WHOLE_KEYS = ("burst", "reps", "seed")
SWEEP_KEYS = (*AXIS_KEYS, *LATENCY_KEYS, *TEXT_KEYS, *WHOLE_KEYS)


# Built-in sweeps, which a [sweeps.NAME] table of the same name replaces. `fixes` (docs/fixes.md):
# each fix's policy beside main's drain and the SDK's loops, on the platform's take and on a
# server-fixed one (its 0.03 s take, core/scenario/project.py FIXED_TAKE_S), over fleets and
# burst depths; its heatmap is `--x policy --y load` (each policy with its K on one axis,
# render/page/sweep_page.py).
BUILTIN_SWEEPS: dict[str, dict[str, Any]] = {
    "fixes": {
        "policy": [DRAIN, TAKE_AHEAD, SDK_112, SDK_TAKE_AHEAD, JOB_CACHE],
        "take_ahead": [0, 32],
        "workers": [1, 2, 4, 8],
        "slots": 32,
        "take_latency": [0.5, FIXED_TAKE_S],
        "load": ["burst:64", "burst:256", "burst:1024"],
    },
}


def sweep_table(folder: Path, name: str) -> tuple[dict[str, Any], str]:
    """(the table's keys as flag values, where it is written, for errors)."""
    project = load_project(folder)
    tables = {**BUILTIN_SWEEPS, **project.sweeps}
    if name not in tables:
        known = ", ".join(sorted(tables)) or "none"
        raise UsageError(
            f"NAME {name!r}: no [sweeps.{name}] in jobbench.toml or pyproject.toml here "
            f"(sweeps: {known}); add the table or give the axes as flags"
        )
    where = (
        f"{project.source} sweeps.{name}" if name in project.sweeps else f"built-in sweep {name}"
    )
    table = tables[name]
    unknown = sorted(set(table) - set(SWEEP_KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {unknown}; use {', '.join(SWEEP_KEYS)}")
    return {key: _value(key, value, where) for key, value in table.items()}, where


def _value(key: str, value: Any, where: str) -> Any:
    items = value if isinstance(value, list) else [value]
    if not items or not all(_scalar(item) for item in items):
        raise UsageError(f"{where}: {key} = {value!r}; write a value, a list or a range string")
    if key in WHOLE_KEYS:
        if isinstance(value, bool) or not isinstance(value, int):
            raise UsageError(f"{where}: {key} = {value!r} is not a whole number; e.g. {key} = 7")
        return value
    if key in LATENCY_KEYS:
        return tuple(str(item) for item in items)  # each one a --take-latency
    if key in TEXT_KEYS and isinstance(value, list):
        raise UsageError(f"{where}: {key} = {value!r}: one value for every cell, e.g. {key} = 2")
    return ",".join(str(item) for item in items)


def _scalar(item: Any) -> bool:
    return isinstance(item, (int, float, str)) and not isinstance(item, bool)
