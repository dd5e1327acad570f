"""A sweep's HTML page: one self-contained file (inline CSS and SVG, no scripts, nothing
fetched) with a heatmap of time to 99 % (or efficiency) over two chosen axes, one small
multiple per combination of the other axes' values, all on one colour scale. Each cell's
tooltip holds its figures and the `jobbench run` that measures it for real."""

from __future__ import annotations

import itertools
from html import escape
from pathlib import Path

from jobbench.render.page.heatmap import HeatCell, Scale, heatmap, legend
from jobbench.render.page.html import CSP
from jobbench.render.page.style import CSS
from jobbench.render.text.sweep_text import count, describe
from jobbench.results.sweep_model import AXIS_NAMES, COLOR_FIGURES, Sweep, SweepCell

POLICY, TAKE_AHEAD = "policy", "take_ahead"
AXIS_TITLES = {
    "policy": "policy",
    "take_ahead": "take-ahead K",
    "workers": "workers",
    "slots": "slots",
    "job_seconds": "job seconds",
    "take_latency": "take latency (s)",
    "wake_latency": "wake latency (s)",
    "load": "load",
    "autoscale": "fleet",
}
# How a caption names one axis's value: `K 8`, `jobs 0.5 s`, `take 0.1 s`.
_VALUE_WORDS = {
    "policy": "{}",
    "take_ahead": "K {}",
    "workers": "{} workers",
    "slots": "{} slots",
    "job_seconds": "jobs {} s",
    "take_latency": "take {} s",
    "wake_latency": "wake {} s",
    "load": "load {}",
    "autoscale": "{}",
}
_HEAT_CSS = """
.multiples{display:flex;flex-wrap:wrap;gap:18px 28px;margin-top:10px}
.multiples figure{margin:0;max-width:100%;overflow-x:auto}
.multiples figcaption{font-size:12.5px;color:var(--muted)}
.heat text{font-size:11.5px;font-variant-numeric:tabular-nums}.heat .lab{font-weight:600}
.heat-empty{fill:var(--panel);stroke:var(--grid)}.heat-legend text{font-size:12px}
code{font-size:12.5px}
"""


def write_sweep_page(sweep: Sweep, html: Path, x: str, y: str, color: str) -> Path:
    html.parent.mkdir(parents=True, exist_ok=True)
    html.write_text(sweep_page(sweep, x, y, color), encoding="utf-8")
    return html


def sweep_page(sweep: Sweep, x: str, y: str, color: str) -> str:
    """`x` and `y`: axis names (results/sweep_model.AXIS_NAMES); `color`: a COLOR_FIGURES key."""
    axes = sweep.axes.model_dump()
    values = {name: [value_text(v) for v in axes[name]] for name in AXIS_NAMES}
    if POLICY in (x, y) and TAKE_AHEAD not in (x, y):
        # Each policy with its take-ahead on one axis (`drain`, `take-ahead K32`, `job-cache`):
        # a K that only some policies take would split the map into halves left empty.
        values[POLICY] = list(dict.fromkeys(_policy_text(c) for c in sweep.cells))
        values[TAKE_AHEAD] = []
    others = [n for n in AXIS_NAMES if n not in (x, y) and len(values[n]) > 1]
    scale = _scale(sweep, color)
    title = COLOR_FIGURES[color]
    figures = []
    for combo in itertools.product(*(values[n] for n in others)):
        fixed = dict(zip(others, combo))
        cells = {
            (_axis_text(c, x), _axis_text(c, y)): _heat_cell(c, color)
            for c in sweep.cells
            if all(value_text(getattr(c, n)) == v for n, v in fixed.items())
        }
        if not cells:
            continue  # a policy with a take-ahead it never runs: skipped, not an empty map
        caption = ", ".join(_words(n, v) for n, v in fixed.items()) or "every cell"
        svg = heatmap(values[x], values[y], cells, scale, (AXIS_TITLES[x], AXIS_TITLES[y]))
        figures.append(f"<figure><figcaption>{escape(caption)}</figcaption>{svg}</figure>")
    return _document(sweep, title, legend(scale, title), figures)


def _policy_text(cell: SweepCell) -> str:
    """A policy with its take-ahead, as the policy axis shows it: `take-ahead K32`, `drain`."""
    return f"{cell.policy} K{cell.take_ahead}" if cell.take_ahead else cell.policy


def _axis_text(cell: SweepCell, axis: str) -> str:
    return _policy_text(cell) if axis == POLICY else value_text(getattr(cell, axis))


def _words(axis: str, value: str) -> str:
    """`4 workers`, `1 worker`, `jobs 0.5 s`: a caption's words for one axis's value."""
    words = _VALUE_WORDS[axis].format(value)
    return words.removesuffix("s") if value == "1" and axis in ("workers", "slots") else words


def value_text(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _heat_cell(cell: SweepCell, color: str) -> HeatCell:
    lines = [
        describe(cell),
        f"time to 50 %: {_or_dash(cell.time_to_p50_s, 's')}",
        f"time to 99 %: {_or_dash(cell.time_to_p99_s, 's')}",
        f"throughput: {_or_dash(cell.throughput_jps, 'jobs/s')}",
        f"efficiency: {'-' if cell.efficiency is None else f'{cell.efficiency:.1%}'}",
        f"takes: {'-' if cell.takes_count is None else cell.takes_count}",
        f"steady e2e p99: {_or_dash(cell.steady_e2e_p99_s, 's')}",
        f"re-run for real: {cell.command}",
    ]
    return HeatCell(cell.figure(color), "\n".join(lines))


def _or_dash(value: float | None, unit: str) -> str:
    return "-" if value is None else f"{value:.3f} {unit}"


def _scale(sweep: Sweep, color: str) -> Scale:
    known = [v for v in (cell.figure(color) for cell in sweep.cells) if v is not None]
    low, high = (min(known), max(known)) if known else (0.0, 1.0)
    if color == "efficiency":  # the higher the better; seconds (below) the lower
        return Scale(low, high, lower_is_better=False, show=lambda v: f"{v:.0%}")
    # seconds: log-coloured, so that 0.2 s against 0.4 s shows as well as 10 s against 20 s
    return Scale(low, high, lower_is_better=True, show=lambda v: f"{v:.2f}", log=True)


def _document(sweep: Sweep, title: str, scale_svg: str, figures: list[str]) -> str:
    axes = sweep.axes.model_dump()
    fixed = [
        _VALUE_WORDS[n].format(value_text(axes[n][0])) for n in AXIS_NAMES if len(axes[n]) == 1
    ]
    skipped = f", {sweep.skipped:,} skipped (policy and take-ahead)" if sweep.skipped else ""
    seed = f", seed {sweep.seed}" if sweep.seed is not None else ""
    header = (
        f"<h1>jobbench sweep: {escape(title)}</h1><header><ul>"
        f"<li>{len(sweep.cells):,} cells{skipped}, {count(sweep.reps, 'rep')} each{seed}; "
        "simulated in virtual time (model workers), not measured</li>"
        f"<li>every cell: burst {sweep.fixed.burst}, hold {escape(sweep.fixed.hold)} s, done "
        f"{escape(sweep.fixed.done_latency)} s"
        + "".join(f", {escape(text)}" for text in fixed)
        + "</li><li>hover a cell for its figures and the <code>jobbench run</code> that measures "
        "it for real</li></ul></header>"
    )
    body = header + scale_svg + f'<div class="multiples">{"".join(figures)}</div>'
    footer = (
        f"<footer>Written by jobbench {escape(sweep.jobbench)}. One self-contained file: inline "
        "CSS and SVG, no scripts, nothing fetched.</footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>jobbench sweep: {escape(title)}</title><style>{CSS}{_HEAT_CSS}</style></head>"
        f"<body><main>{body}{footer}</main></body></html>\n"
    )
