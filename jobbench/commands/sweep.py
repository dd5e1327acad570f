"""`jobbench sweep`: a SweepRequest -> the grid's cells -> each simulated in virtual time ->
the sweep document (JSON), its CSV, the summary on stdout and, with --html, the heatmap page."""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from jobbench.commands.requests.sweep import SweepRequest
from jobbench.core.scenario.checks import (
    BURST,
    REPS,
    check_count,
    check_writable_file,
    check_writable_folder,
    toml_terms,
)
from jobbench.core.sweep.grid import (
    Cells,
    Grid,
    autoscale_axis,
    grid_cells,
    latency_axis,
    load_axis,
    policy_axis,
    seconds_axis,
    whole_axis,
)
from jobbench.core.sweep.sweep_tables import sweep_table
from jobbench.errors import EXIT_OK, UsageError
from jobbench.procs.signals import interrupts_deferred
from jobbench.render.text.progress import make_progress
from jobbench.results.model_base import to_json
from jobbench.results.sweep_model import AXIS_NAMES, COLOR_FIGURES, Sweep

COLORS = {
    "time-to-p99": "time_to_p99_s",
    "efficiency": "efficiency",
    "steady-p99": "steady_e2e_p99_s",
    "cost": "fleet_worker_s",
}


# Each axis's and setting's value when neither a flag nor a [sweeps.NAME] key gives one.
DEFAULTS: dict[str, Any] = {
    "workers": "4",
    "slots": "32",
    "take_ahead": "0",
    "job_seconds": "0.5",
    "take_latency": ("0.5",),
    "wake_latency": ("0.05",),
    "load": (),  # no profile: every cell runs --burst
    "autoscale": (),  # no spec: every cell's fleet is fixed
    "policy": None,  # each take-ahead's own (core/sweep/grid.py AUTO_POLICY)
    "burst": 1024,
    "hold": "20",
    "done_latency": "0",
    "reps": 1,
    "seed": None,
}


def sweep_command(req: SweepRequest) -> int:
    values, where, from_table = settings(req)
    with toml_terms(where) if from_table else nullcontext():  # the table's values, first
        read_grid({k: v for k, v in values.items() if k in from_table})
        for key, what in (("burst", BURST), ("reps", REPS)):
            if key in from_table:
                check_count(what, values[key])
    grid = read_grid(values)
    check_count(BURST, grid.burst)
    x, y, color = _axis_name(req.x, "--x"), _axis_name(req.y, "--y"), _color(req.color)
    if x == y:
        raise UsageError(f"--x {req.x} and --y {req.y}: choose two different axes")
    reps, seed = values["reps"], values["seed"]
    check_count(REPS, reps)
    if req.processes is not None and req.cluster is not None:
        raise UsageError(
            f"--processes {req.processes} with --cluster: the cluster's CPUs run the cells; "
            "leave out --processes"
        )
    if req.html is not None:
        check_writable_file(req.html, "--html")
    check_writable_folder(req.out, "--out")
    cells = grid_cells(grid)
    from jobbench.core.sweep.sweep_run import (
        run_sweep,  # the simulator: only once the flags are good
    )

    processes = req.processes or os.cpu_count() or 1
    if req.cluster is None:
        _, progress = make_progress(req.quiet)
        sweep = run_sweep(grid, cells, reps=reps, seed=seed, processes=processes, progress=progress)
    else:
        sweep = _cluster_sweep(req, req.cluster, grid, cells, reps, seed)
    json_path, csv_path = save_sweep(sweep, req.out, req.label)
    from jobbench.render.text.sweep_text import render_summary

    render_summary(sweep, sys.stdout, saved=f"{json_path}, {csv_path}")
    if req.html is not None:
        from jobbench.render.page.sweep_page import write_sweep_page

        write_sweep_page(sweep, req.html, x, y, color)
        print(f"html: {req.html}")
    return EXIT_OK


def _cluster_sweep(
    req: SweepRequest, address: str, grid: Grid, cells: Cells, reps: int, seed: int | None
) -> Sweep:
    """The sweep with its cells as tasks on the cluster at `address`; this process leaves the
    cluster however the sweep ends, and an interrupted one saves nothing (its tasks are
    cancelled: procs/ray_tasks.py)."""
    from jobbench.core.sweep.sweep_run import run_sweep
    from jobbench.procs.ray_cluster import connect, disconnect

    try:
        cluster = connect(address)  # a bad or unreachable address: a usage error, nothing run
        _, progress = make_progress(req.quiet)
        nodes = len(cluster.nodes)
        progress.message(
            f"cluster: {address}, {nodes} node{'s' if nodes != 1 else ''}, {cluster.cpus:g} CPUs"
        )
        return run_sweep(
            grid, cells, reps=reps, seed=seed, processes=1, progress=progress, cluster=cluster
        )
    finally:
        with interrupts_deferred(redeliver=False):  # leaving the cluster is not cut short
            disconnect()


def settings(req: SweepRequest) -> tuple[dict[str, Any], str, set[str]]:
    """Every setting: the flag's if given, else the [sweeps.NAME] key's, else the default;
    with where the table is and which settings came from it."""
    table, where = sweep_table(Path.cwd(), req.name) if req.name else ({}, "")
    values, from_table = {}, set()
    for key, default in DEFAULTS.items():
        given = getattr(req, key)
        if given is None and key in table:
            values[key] = table[key]
            from_table.add(key)
        else:
            values[key] = default if given is None else given
    return values, where, from_table


def read_grid(values: dict[str, Any]) -> Grid:
    """The axes from their flags' text, each checked; the bad one is named with its fix.
    A setting missing from `values` is its default (the table's own are checked alone)."""
    v = {**DEFAULTS, **values}
    return Grid(
        policies=policy_axis(v["policy"]),
        take_aheads=whole_axis(v["take_ahead"], "--take-ahead", 0),
        workers=whole_axis(v["workers"], "--workers", 1),
        slots=whole_axis(v["slots"], "--slots", 1),
        job_seconds=seconds_axis(v["job_seconds"], "--job-seconds"),
        take_latencies=latency_axis(v["take_latency"], "--take-latency"),
        wake_latencies=latency_axis(v["wake_latency"], "--wake-latency"),
        loads=load_axis(v["load"]),
        autoscales=autoscale_axis(v["autoscale"]),
        burst=v["burst"],
        hold=v["hold"],
        done_latency=v["done_latency"],
    )


def save_sweep(sweep: Sweep, out: Path, label: str) -> tuple[Path, Path]:
    """LABEL.sweep.json (the document) and LABEL.sweep.csv (a row per cell) in `out`."""
    import json

    from jobbench.render.text.sweep_text import sweep_csv

    out.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = out / f"{label}.sweep.json", out / f"{label}.sweep.csv"
    json_path.write_text(json.dumps(to_json(sweep), indent=2) + "\n", encoding="utf-8")
    csv_path.write_text(sweep_csv(sweep), encoding="utf-8")
    return json_path, csv_path


def _axis_name(text: str, flag: str) -> str:
    name = text.replace("-", "_")
    if name not in AXIS_NAMES:
        names = ", ".join(n.replace("_", "-") for n in AXIS_NAMES)
        raise UsageError(f"{flag} {text}: not an axis; use one of {names}")
    return name


def _color(text: str) -> str:
    if text not in COLORS:
        *others, last = COLORS
        raise UsageError(f"--color {text}: use {', '.join(others)} or {last}")
    figure = COLORS[text]
    assert figure in COLOR_FIGURES
    return figure
