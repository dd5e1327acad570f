"""`jobbench report NAME --html FILE` and `--html` on run / compare: load, plot, write, open.

NAME is a saved label (reports/NAME.json), a result file, or a comparison file
(reports/A-vs-B.json, which records where its sides' results are). Raw events come from
`<result>.events.jsonl` beside each result; the plots show one rep of each scenario.
"""

from __future__ import annotations

import webbrowser
from dataclasses import dataclass
from pathlib import Path

from jobbench.core.checks import check_writable_file
from jobbench.errors import EXIT_OK
from jobbench.render.report_page import comparison_sides, write_report
from jobbench.results.model import READABLE_COMPARISON_SCHEMAS
from jobbench.results.store import find_result, load_json, parse_comparison, parse_result


@dataclass(frozen=True)
class ReportRequest:
    name: str
    html: Path
    out: Path = Path("reports")
    rep: int | None = None  # None: the last rep of each scenario
    open_browser: bool = False


def report_command(request: ReportRequest) -> int:
    check_writable_file(request.html, "--html")
    path = find_result(request.name, request.out)
    data = load_json(path)  # read once: a result, or a comparison of two
    if data.get("schema") in READABLE_COMPARISON_SCHEMAS:
        comparison = parse_comparison(data, path)
        docs, paths = comparison_sides(comparison, path)
        written = write_report(docs, paths, request.html, request.rep, comparison)
    else:
        written = write_report([parse_result(data, path)], [path], request.html, request.rep)
    print(f"wrote {written} ({_size(written)})")
    if request.open_browser:
        webbrowser.open(written.resolve().as_uri())
    return EXIT_OK


def _size(path: Path) -> str:
    size = path.stat().st_size
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB"
