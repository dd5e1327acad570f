"""`jobbench sweep` through the real CLI in this process: the grid's cells (and the skipped
policy x take-ahead pairs), the CSV and JSON, figures equal to the simulator's for the cell's
scenario, the re-run command read back by the real `run` parser, the heatmap page, and bad
input as one line with exit code 2. Latencies are scaled down (20 ms takes and jobs)."""

from __future__ import annotations

import csv
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from jobbench.commands import run as run_module
from jobbench.core.run.target_seam import Plan
from jobbench.core.scenario.config import Scenario
from jobbench.core.sim.engine import simulate_rep
from jobbench.core.sweep.grid import (
    Cell,
    Grid,
    cell_scenario,
    latency_axis,
    seconds_axis,
    whole_axis,
)
from jobbench.errors import EXIT_USAGE, UsageError
from jobbench.render.text.sweep_text import CSV_COLUMNS
from jobbench.results.sweep_model import SWEEP_SCHEMA, Sweep
from tests.unit.cli import run_cli

SMALL = (
    "sweep", "--workers", "1,2", "--slots", "4,8", "--take-ahead", "0,4", "--burst", "32",
    "--job-seconds", "0.02", "--take-latency", "0.02", "--wake-latency", "0.005",
    "--hold", "2", "--processes", "1",
)  # fmt: skip


def sweep(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *args: str) -> tuple[Sweep, list]:
    """Run `jobbench sweep ARGS` in tmp_path; its document and its CSV's rows."""
    code = run_cli(monkeypatch, *args, cwd=tmp_path)
    assert code == 0
    doc = Sweep.model_validate(json.loads((tmp_path / "reports/sweep.sweep.json").read_text()))
    with (tmp_path / "reports/sweep.sweep.csv").open() as f:
        rows = list(csv.reader(f))
    return doc, rows


def grid_of(doc: Sweep) -> Grid:
    """The Grid whose values the document's fixed block holds (the axes do not matter here)."""
    return Grid((), (), (), (), (), (), (), burst=doc.fixed.burst, hold=doc.fixed.hold)


def cell_of(row: dict[str, Any]) -> Cell:
    return Cell(
        policy=row["policy"],
        take_ahead=int(row["take_ahead"]),
        workers=int(row["workers"]),
        slots=int(row["slots"]),
        job_seconds=float(row["job_seconds"]),
        take_latency=row["take_latency"],
        wake_latency=row["wake_latency"],
        load=row["load"],
        autoscale=row.get("autoscale") or "fixed",
    )


def test_a_small_grid_has_a_row_per_cell_with_every_axis_and_figure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    doc, rows = sweep(monkeypatch, tmp_path, *SMALL)
    assert tuple(rows[0]) == CSV_COLUMNS
    assert CSV_COLUMNS[-8:] == (
        "time_to_p50_s", "time_to_p99_s", "throughput_jps", "efficiency", "takes_count",
        "steady_e2e_p99_s", "fleet_worker_s", "command"
    )  # fmt: skip
    assert {row[CSV_COLUMNS.index("load")] for row in rows[1:]} == {"burst:32"}
    assert {row[CSV_COLUMNS.index("autoscale")] for row in rows[1:]} == {"fixed"}
    assert len(rows) - 1 == len(doc.cells) == 2 * 2 * 2  # no --policy: each K's own, none skipped
    assert doc.schema_ == SWEEP_SCHEMA and doc.skipped == 0 and doc.simulated
    policies = {(row[0], row[1]) for row in rows[1:]}
    assert policies == {("drain", "0"), ("take-ahead", "4")}
    assert all(float(row[CSV_COLUMNS.index("time_to_p99_s")]) > 0 for row in rows[1:])


def test_a_cells_figures_are_the_simulators_for_its_scenario(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    doc, rows = sweep(monkeypatch, tmp_path, *SMALL)
    row = dict(zip(rows[0], rows[-1]))
    figures = simulate_rep(cell_scenario(cell_of(row), grid_of(doc)), seed=None).measure.figures
    for name in ("time_to_p50_s", "time_to_p99_s", "throughput_jps", "efficiency"):
        assert float(row[name]) == figures[name]
    assert int(row["takes_count"]) == figures["takes"]["count"]


def test_policies_that_do_not_go_with_a_take_ahead_are_skipped_and_counted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    doc, _ = sweep(monkeypatch, tmp_path, *SMALL, "--policy", "drain,take-ahead,sdk-1.12")
    # 3 policies x 2 K: drain/0, take-ahead/4, sdk-1.12/0 run; the other three pairs do not
    assert len(doc.cells) == 3 * 4 and doc.skipped == 3 * 4
    assert {(c.policy, c.take_ahead) for c in doc.cells} == {
        ("drain", 0),
        ("take-ahead", 4),
        ("sdk-1.12", 0),
    }
    assert doc.axes.policy == ["drain", "take-ahead", "sdk-1.12"]


def test_the_policy_axis_gives_cells_for_every_policy_and_one_heatmap_with_each_k(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Each fix's policy beside main's and the SDK's (docs/fixes.md): a cell each per fleet, and with
    # --x policy one map whose axis names each policy with its K, not one half-empty map per K.
    policies = "drain,take-ahead,sdk-take-ahead,job-cache,sdk-1.12"
    args = (*SMALL, "--policy", policies, "--slots", "8", "--x", "policy", "--y", "workers")
    doc, _ = sweep(monkeypatch, tmp_path, *args, "--html", "sweep.html")
    assert {(c.policy, c.take_ahead) for c in doc.cells} == {
        ("drain", 0),
        ("take-ahead", 4),
        ("sdk-take-ahead", 4),
        ("job-cache", 0),
        ("sdk-1.12", 0),
    }
    assert len(doc.cells) == 5 * 2 and all(c.time_to_p99_s for c in doc.cells)
    page = (tmp_path / "sweep.html").read_text()
    assert page.count('<svg class="heat"') == 1
    for label in ("drain", "take-ahead K4", "sdk-take-ahead K4", "job-cache", "sdk-1.12"):
        assert f">{label}</text>" in page
    assert ">K 0<" not in page


def test_the_builtin_fixes_sweep_sets_each_fix_on_the_platform_and_a_fixed_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    args = ("sweep", "fixes", "--workers", "4", "--x", "policy", "--y", "load")
    doc, _ = sweep(monkeypatch, tmp_path, *args, "--processes", "1", "--html", "fixes.html")
    assert doc.axes.policy == ["drain", "take-ahead", "sdk-1.12", "sdk-take-ahead", "job-cache"]
    assert doc.axes.take_latency == ["0.5", "0.03"]  # the platform's take, a fixed server's
    assert len(doc.cells) == 5 * 2 * 3  # policies (each with its K) x takes x burst depths
    page = (tmp_path / "fixes.html").read_text()
    assert page.count('<svg class="heat"') == 2 and ">burst:1024</text>" in page


def test_the_rerun_command_is_the_same_scenario_through_the_real_run_parser(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    doc, _ = sweep(monkeypatch, tmp_path, *SMALL, "--take-latency", "uniform:0.01,0.03")
    assert {c.take_latency for c in doc.cells} == {"0.02", "uniform:0.01,0.03"}
    planned: list[Scenario] = []

    def caught(plans: list[Plan], progress: object) -> list[Any]:
        planned.extend(plans[0].config.scenarios)
        raise UsageError("planned, not run")

    monkeypatch.setattr(run_module, "run_plans", caught)
    grid = grid_of(doc)
    for cell in doc.cells:
        words = shlex.split(cell.command)
        assert words[:2] == ["jobbench", "run"]
        assert run_cli(monkeypatch, *words[1:], cwd=tmp_path) == EXIT_USAGE
        assert planned.pop() == cell_scenario(cell_of(cell.model_dump()), grid)


def test_a_load_axis_sweeps_profiles_beside_the_burst_and_each_reruns_for_real(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    profiles = ("--load", "rate:100/s:for:1s", "--load", "burst:32", "--load", "burst:64")
    doc, _ = sweep(monkeypatch, tmp_path, *SMALL, *profiles, "--color", "steady-p99")
    assert doc.axes.load == ["rate:100/s:for:1s", "burst:32", "burst:64"]
    assert len(doc.cells) == 8 * 3
    grid = grid_of(doc)
    for cell in doc.cells:
        scenario = cell_scenario(cell_of(cell.model_dump()), grid)
        figures = simulate_rep(scenario, seed=None).measure.figures
        if cell.load == "rate:100/s:for:1s":  # a profile: its steady p99 and its efficiency
            assert cell.steady_e2e_p99_s == figures["steady"]["e2e_p99_s"] is not None
            assert cell.efficiency == figures["efficiency"] is not None
            assert "--load rate:100/s:for:1s" in cell.command
        else:  # the grid's own burst reruns as --burst, another as --load burst:N
            assert cell.steady_e2e_p99_s is None and cell.time_to_p99_s is not None
            want = "--burst 32" if cell.load == "burst:32" else "--load burst:64"
            assert want in cell.command
    planned: list[Scenario] = []

    def caught(plans: list[Plan], progress: object) -> list[Any]:
        planned.extend(plans[0].config.scenarios)
        raise UsageError("planned, not run")

    monkeypatch.setattr(run_module, "run_plans", caught)
    for cell in doc.cells[:3]:
        assert run_cli(monkeypatch, *shlex.split(cell.command)[1:], cwd=tmp_path) == EXIT_USAGE
        assert planned.pop() == cell_scenario(cell_of(cell.model_dump()), grid)


def test_a_fleet_axis_sweeps_autoscaled_fleets_beside_the_fixed_one_with_their_cost(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    specs = ("--autoscale", "fixed", "--autoscale", "queue-delay=0.05,active=1,idle=0.2,cold=0")
    doc, rows = sweep(monkeypatch, tmp_path, *SMALL, *specs, "--color", "cost", "--html", "h.html")
    assert doc.axes.autoscale == ["fixed", "queue-delay=0.05,active=1,idle=0.2,cold=0"]
    assert len(doc.cells) == 8 * 2 and "autoscale" in rows[0] and "fleet_worker_s" in rows[0]
    grid = grid_of(doc)
    for cell in doc.cells:
        scenario = cell_scenario(cell_of(cell.model_dump()), grid)
        figures = simulate_rep(scenario, seed=None).measure.figures
        assert cell.time_to_p99_s == figures["time_to_p99_s"]
        if cell.autoscale == "fixed":
            assert cell.fleet_worker_s is None and "--autoscale" not in cell.command
        else:
            assert cell.fleet_worker_s == figures["fleet"]["worker_s"] > 0
            assert f"--autoscale {cell.autoscale}" in cell.command
    planned: list[Scenario] = []

    def caught(plans: list[Plan], progress: object) -> list[Any]:
        planned.extend(plans[0].config.scenarios)
        raise UsageError("planned, not run")

    monkeypatch.setattr(run_module, "run_plans", caught)
    autoscaled = next(c for c in doc.cells if c.autoscale != "fixed")
    assert run_cli(monkeypatch, *shlex.split(autoscaled.command)[1:], cwd=tmp_path) == EXIT_USAGE
    assert planned.pop() == cell_scenario(cell_of(autoscaled.model_dump()), grid)
    assert "worker-seconds" in (tmp_path / "h.html").read_text()


def test_a_bad_autoscale_value_on_the_fleet_axis_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli(monkeypatch, *SMALL, "--autoscale", "queue-delay=2,idle=-1", cwd=tmp_path)
    assert code == EXIT_USAGE and "--autoscale" in capsys.readouterr().err


def test_sampled_latencies_with_a_seed_give_the_same_document_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    args = (*SMALL, "--take-latency", "uniform:0.01,0.03", "--reps", "3", "--seed", "7")
    sweep(monkeypatch, tmp_path, *args)
    first = (tmp_path / "reports/sweep.sweep.json").read_bytes()
    doc, _ = sweep(monkeypatch, tmp_path, *args)
    assert (tmp_path / "reports/sweep.sweep.json").read_bytes() == first
    assert doc.reps == 3 and doc.seed == 7
    assert len({c.time_to_p99_s for c in doc.cells}) > 1


def test_the_heatmap_page_has_a_cell_per_cell_with_its_figures_and_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    doc, _ = sweep(monkeypatch, tmp_path, *SMALL, "--html", "sweep.html", "--color", "efficiency")
    page = (tmp_path / "sweep.html").read_text()
    assert "<script" not in page and "Content-Security-Policy" in page
    assert page.count('<svg class="heat"') == 2  # x workers, y slots; one per (policy, K)
    tips = re.findall(r"<title>([^<]*)</title>", page)
    assert len(tips) - 1 == len(doc.cells)  # and the page's own <title>
    assert all("re-run for real: jobbench run --worker model" in tip for tip in tips[1:])
    assert "efficiency: " in tips[1] and "jobbench sweep: efficiency" in page


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--workers", "1..x"), "error: --workers 1..x: write a list or a range"),
        (("--workers", "0,1"), "error: --workers 0,1: 0 is below 1"),
        (("--slots", "4,4"), "error: --slots 4,4: a value is given twice"),
        (("--job-seconds", "0"), "error: --job-seconds 0: use seconds above 0"),
        (("--take-latency", "uniform:1"), "error: --take-latency: "),
        (("--policy", "drian"), "error: --policy drian: 'drian' is none; use sdk-1.12"),
        (("--policy", "drain", "-t", "4"), "error: --policy/--take-ahead: no cell is valid"),
        (("--x", "bogus"), "error: --x bogus: not an axis; use one of policy, take-ahead"),
        (("--x", "slots"), "error: --x slots and --y slots: choose two different axes"),
        (("--color", "red"), "error: --color red: use time-to-p99, efficiency, steady-p99 or cost"),
        (("--load", "rate:4:for:1s"), "error: --load rate:4:for:1s: '4' is not a rate"),
        (("--load", "burst:8", "--load", "burst:8"), "error: --load burst:8 --load burst:8: "),
        (("--burst", "1e3"), "error: --burst 1e3: write a whole number, e.g. 1000"),
        (("--workers", "1..100000"), "error: --workers 1..100000: "),
        (("--processes", "0"), "error: --processes 0: use 1 or more"),
        (("-w", "1..40", "-s", "1..40", "-j", "0.1..8+0.1"), "error: the grid has 128,000 cells"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    message: str,
) -> None:
    assert run_cli(monkeypatch, "sweep", *args, cwd=tmp_path) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(message), err
    assert err.count("\n") == 1
    assert not (tmp_path / "reports").exists()


def test_axes_read_lists_and_ranges() -> None:
    assert whole_axis("1..64*2", "--workers", 1) == (1, 2, 4, 8, 16, 32, 64)
    assert whole_axis("8..32+8,64", "--slots", 1) == (8, 16, 24, 32, 64)
    assert whole_axis("0..3", "--take-ahead", 0) == (0, 1, 2, 3)
    assert seconds_axis("0.1..0.5+0.1", "--job-seconds") == (0.1, 0.2, 0.3, 0.4, 0.5)
    assert latency_axis(["0.1,0.5", "uniform:0.1,0.3"], "--take-latency") == (
        "0.1",
        "0.5",
        "uniform:0.1,0.3",
    )
    assert latency_axis(["0.123456789,2"], "--wake-latency") == ("0.123456789", "2")
    with pytest.raises(UsageError, match=r"--workers 8\.\.1: write a list or a range"):
        whole_axis("8..1", "--workers", 1)


TABLE = """
[sweeps.small]
workers = [1, 2]
slots = "4..8+4"
take_ahead = [0, 4]
job_seconds = 0.02
take_latency = [0.02, "uniform:0.01,0.03"]
wake_latency = 0.005
hold = 2
burst = 32
"""


def test_a_sweeps_table_gives_the_axes_and_a_flag_wins_over_its_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "jobbench.toml").write_text(TABLE)
    doc, _ = sweep(monkeypatch, tmp_path, "sweep", "small", "--workers", "3", "--processes", "1")
    assert doc.axes.workers == [3] and doc.axes.slots == [4, 8] and doc.fixed.burst == 32
    assert doc.axes.take_latency == ["0.02", "uniform:0.01,0.03"] and doc.fixed.hold == "2"
    assert len(doc.cells) == 1 * 2 * 2 * 2


def test_a_sweeps_table_gives_a_load_axis(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    table = TABLE + 'load = ["rate:50/s:for:1s,warmup:0.2s", "burst:32"]\n'
    (tmp_path / "jobbench.toml").write_text(table)
    doc, _ = sweep(monkeypatch, tmp_path, "sweep", "small", "--processes", "1")
    assert doc.axes.load == ["rate:50/s:for:1s,warmup:0.2s", "burst:32"]
    assert len(doc.cells) == 2 * 2 * 2 * 2 * 2


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('workers = "1..x"', "sweeps.small: workers = 1..x: write a list or a range"),
        ("burst = 0", "sweeps.small: burst = 0"),
        ("worker = 2", "sweeps.small: unknown key(s) ['worker']; use workers, slots"),
        ("hold = [1, 2]", "sweeps.small: hold = [1, 2]: one value for every cell"),
    ],
)
def test_a_bad_sweeps_table_is_one_line_naming_its_key(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    table: str,
    message: str,
) -> None:
    (tmp_path / "jobbench.toml").write_text(f"[sweeps.small]\n{table}\n")
    assert run_cli(monkeypatch, "sweep", "small", cwd=tmp_path) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'jobbench.toml'} {message}"), err
    assert err.count("\n") == 1


def test_a_sweep_name_with_no_table_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "jobbench.toml").write_text(TABLE)
    assert run_cli(monkeypatch, "sweep", "big", cwd=tmp_path) == EXIT_USAGE
    assert capsys.readouterr().err == (
        "error: NAME 'big': no [sweeps.big] in jobbench.toml or pyproject.toml here (sweeps: "
        "fixes, small); add the table or give the axes as flags\n"
    )


@pytest.mark.parametrize(
    "load, autoscale",
    [("burst:64", "fixed"), ("rate:40/s:for:2s", "fixed"), ("burst:64", "queue-delay=1,active=1")],
    ids=["burst", "profile", "autoscaled"],
)
def test_a_brief_measure_has_the_full_ones_figures_and_no_per_job_ones(
    load: str, autoscale: str
) -> None:
    cell = Cell("take-ahead", 4, 2, 8, 0.1, "0.05", "0.01", load, autoscale)
    scenario = cell_scenario(cell, Grid((), (), (), (), (), (), (), burst=64, hold="2"))
    full = simulate_rep(scenario, seed=1).measure
    brief = simulate_rep(scenario, seed=1, brief=True).measure
    if autoscale != "fixed":  # a fleet's figures need the held jobs: it is measured in full
        assert brief == full and "fleet" in brief.figures
        return
    assert {k: v for k, v in full.figures.items() if k in brief.figures} == brief.figures
    assert set(full.figures) - set(brief.figures) == {"phases", "split", "utilisation", "held"}
    assert not brief.samples.e2e and full.samples.e2e
    assert ("steady" in brief.figures) == (load != "burst:64")
