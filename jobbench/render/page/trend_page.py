"""`jobbench trend --html`: one self-contained page (inline CSS and SVG, nothing fetched), a table
of the change points, then each row's metric over the commits, oldest on the left: per commit a
dot at the median of its counted reps and a bar from their least to their most, the level of
each stretch between change points as a line, and each change point marked where its new level
begins. Hovering a commit's dot shows its subject and figures; a change point's mark, the
change. Laid out for 1,100 px plots, so the page fits 1,400 px."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from jobbench.render.page import svg
from jobbench.render.page.html import CSP
from jobbench.render.page.style import CSS
from jobbench.render.words import commit_changes as words
from jobbench.results.compare import METRICS
from jobbench.results.trend import ChangePoint, Commit, Series

WIDTH, HEIGHT = 1100, 300
X_LABELS = 8  # commit names under the axis, at most: more would overlap
_TREND_CSS = """
.spread{stroke:var(--a);stroke-width:1.5;fill:none;opacity:.55}
.pt.med{fill:var(--a);stroke:none}
.level{stroke:var(--muted);stroke-width:1.5;fill:none;stroke-dasharray:5 3}
.cp{stroke-width:2;fill:none;stroke-dasharray:4 3}.cp.slower{stroke:var(--warn)}
.cp.faster{stroke:var(--ideal)}.lab.slower{fill:var(--warn)}.lab.faster{fill:var(--ideal)}
td.txt{text-align:left;white-space:normal}
"""


def write_trend_page(
    html: Path,
    title: str,
    commits: Sequence[Commit],
    series: Sequence[Series],
    points: Sequence[ChangePoint],
    notes: Sequence[str],
) -> Path:
    html.parent.mkdir(parents=True, exist_ok=True)
    html.write_text(trend_page(title, commits, series, points, notes), encoding="utf-8")
    return html


def trend_page(
    title: str,
    commits: Sequence[Commit],
    series: Sequence[Series],
    points: Sequence[ChangePoint],
    notes: Sequence[str],
) -> str:
    header = "<header><ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul></header>"
    body = [f"<h1>jobbench trend: {escape(title)}</h1>", header, _table(commits, points)]
    for row in series:
        mine = [p for p in points if p.scenario == row.scenario and p.metric == row.metric]
        label = METRICS[row.metric].label
        body.append(f"<h2>{escape(row.scenario)}</h2>")
        body.append(f'<p class="note">{escape(label)} ({escape(row.metric)}), per commit</p>')
        body.append(f"<figure>{plot(row, mine, commits)}</figure>")
    footer = (
        "<footer>Written by jobbench. One self-contained file: inline CSS and SVG, no scripts, "
        "nothing fetched.</footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>jobbench trend: {escape(title)}</title><style>{CSS}{_TREND_CSS}</style></head>"
        f"<body><main>{''.join(body)}{footer}</main></body></html>\n"
    )


def _table(commits: Sequence[Commit], points: Sequence[ChangePoint]) -> str:
    if not points:
        return '<p class="note">No change point: every row kept its level over these commits.</p>'
    head = "".join(
        f"<th>{h}</th>"
        for h in ("commit", "subject", "row", "metric", "before", "after", "change", "strength")
    )
    rows = []
    for point in points:
        commit = commits[point.index]
        cells = [
            f'<td class="txt"><code>{escape(commit.name)}</code></td>',
            f'<td class="txt">{escape(words.subject(commit, 60))}</td>',
            f'<td class="txt">{escape(point.scenario)}</td>',
            f'<td class="txt">{escape(point.metric)}</td>',
            f"<td>{escape(words.spread(point.metric, point.before, point.before_ci))}</td>",
            f"<td>{escape(words.spread(point.metric, point.after, point.after_ci))}</td>",
            f"<td>{escape(words.change(point.change, point.change_ci))}</td>",
            f"<td>{escape(words.strength(point))}</td>",
        ]
        style = "v-regression" if point.direction == "slower" else "v-better"
        rows.append(f'<tr class="{style}">{"".join(cells)}</tr>')
    caption = (
        "<caption>before / after: the median of every counted rep between neighbouring change "
        "points [95 % interval]; change: after / before - 1, Hodges-Lehmann [95 % interval]; "
        "strength: the change in multiples of the row's rep-to-rep noise</caption>"
    )
    return f'<div class="scroll"><table>{caption}<tr>{head}</tr>{"".join(rows)}</table></div>'


def plot(row: Series, points: Sequence[ChangePoint], commits: Sequence[Commit]) -> str:
    """The row's metric over every commit of the trend (a commit without the row: a gap)."""
    values = [v for p in row.points for v in p.clean]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (high - low) * 0.1 or high * 0.05 or 1.0
    f = svg.Frame(
        WIDTH, HEIGHT, x_max=max(len(commits) - 1, 1), y_max=high + pad,
        y_min=max(0.0, low - pad), left=72, top=36, bottom=44,
    )  # fmt: skip
    parts = [_y_axis(f, row.metric), _x_labels(f, commits)]
    parts += _levels(f, row, points)
    for point in points:
        parts.append(_change_mark(f, point, commits))
    half = f.inner_w / max(len(commits) - 1, 1) / 2
    for p in row.points:
        x = f.x(p.index)
        tip = _tip(commits[p.index], row.metric, p.median, p.clean)
        spread = svg.line(x, f.y(min(p.clean)), x, f.y(max(p.clean)), "spread")
        dot = svg.path(svg.dots_d([(x, f.y(p.median))], size=min(6.0, max(3.0, half))), "pt med")
        parts.append(f"<g><title>{escape(tip)}</title>{spread}{dot}</g>")
    title = f"{row.scenario}: {row.metric} per commit"
    return svg.document(WIDTH, HEIGHT, title, "".join(parts))


def _tip(commit: Commit, metric: str, median: float, clean: Sequence[float]) -> str:
    figures = (
        f"median {words.value(metric, median)}, least {words.value(metric, min(clean))}, "
        f"most {words.value(metric, max(clean))}, {len(clean)} reps"
    )
    return f"{commit.name} {commit.subject}\n{figures}"


def _y_axis(f: svg.Frame, metric: str) -> str:
    parts = []
    step = svg.nice_step(f.y_max - f.y_min, 4)
    for tick in svg.ticks(f.y_min, f.y_max, 4):
        y = f.y(tick)
        parts.append(svg.line(f.left, y, f.width - f.right, y, "grid"))
        parts.append(svg.text(f.left - 6, y + 4, svg.tick_text(tick, step), anchor="end"))
    bottom = f.top + f.inner_h
    parts.append(svg.line(f.left, bottom, f.width - f.right, bottom, "ax"))
    parts.append(svg.line(f.left, f.top, f.left, bottom, "ax"))
    unit = words.unit(metric)
    label = {"s": "seconds", "ms": "ms", "ratio": "ratio"}[unit]
    parts.append(
        f'<text class="lab" text-anchor="middle" transform="translate(14 '
        f'{svg.num(f.top + f.inner_h / 2)}) rotate(-90)">{escape(label)}</text>'
    )
    return "".join(parts)


def _x_labels(f: svg.Frame, commits: Sequence[Commit]) -> str:
    """A few commits named under the axis (the first, the last, evenly between)."""
    count = len(commits)
    every = max(1, -(-count // X_LABELS))
    shown = list(range(0, count, every))
    if count - 1 - shown[-1] < every / 2:  # the last's name in place of one too close to it
        shown[-1] = count - 1
    else:
        shown.append(count - 1)
    parts = []
    bottom = f.top + f.inner_h
    for index in shown:
        x = f.x(index)
        parts.append(svg.line(x, bottom, x, bottom + 4, "ax"))
        name = svg.fit(commits[index].name, f.inner_w / X_LABELS - 8)
        parts.append(svg.fitted_text(x, bottom + 17, name, f.width, anchor="middle"))
    parts.append(
        svg.text(f.left + f.inner_w / 2, f.height - 6, "commits, oldest first", anchor="middle")
    )
    return "".join(parts)


def _levels(f: svg.Frame, row: Series, points: Sequence[ChangePoint]) -> list[str]:
    """Each stretch's level between change points: the before of the first, then each after."""
    if not points or not row.points:
        return []
    cuts = [point.index for point in points]
    starts = [row.points[0].index, *cuts]
    ends = [*(c - 0.5 for c in cuts), row.points[-1].index]
    levels = [points[0].before, *(point.after for point in points)]
    return [
        svg.line(f.x(a - 0.5 if i else a), f.y(level), f.x(b), f.y(level), "level")
        for i, (a, b, level) in enumerate(zip(starts, ends, levels))
    ]


def _change_mark(f: svg.Frame, point: ChangePoint, commits: Sequence[Commit]) -> str:
    x = f.x(point.index - 0.5)
    mark = svg.line(x, f.top - 6, x, f.top + f.inner_h, f"cp {point.direction}")
    label = f"{commits[point.index].name} {words.change(point.change)}"
    text = svg.fitted_text(x + 4, f.top - 10, label, f.width, cls=f"lab {point.direction}")
    tip = words.point_line(point, commits[point.index])
    return f"<g><title>{escape(tip)}</title>{mark}{text}</g>"
