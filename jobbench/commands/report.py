"""`jobbench report NAME --html FILE` and `--html` on run / compare: load, plot, write, open.

NAME is a saved label (reports/NAME.json), a result file, or a comparison file
(reports/A-vs-B.json, which records where its sides' results are); `LABEL~N` is a run N back
(`jobbench history`). Raw events come from `<result>.events.jsonl` beside each result; the plots
show one rep of each scenario. An incomplete result is said so on stderr before the page is
written.
"""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path

from jobbench.commands.requests.report import ReportRequest
from jobbench.core.scenario.checks import check_writable_file
from jobbench.errors import EXIT_OK
from jobbench.render.page.report_page import comparison_sides, write_report
from jobbench.results.model import READABLE_COMPARISON_SCHEMAS, Result
from jobbench.results.store import find_result, load_json, parse_comparison, parse_result


def report_command(request: ReportRequest) -> int:
    check_writable_file(request.html, "--html")
    path = find_result(request.name, request.out)
    data = load_json(path)  # read once: a result, or a comparison of two
    if data.get("schema") in READABLE_COMPARISON_SCHEMAS:
        comparison = parse_comparison(data, path)
        docs, paths = comparison_sides(comparison, path)
        warn_incomplete(docs, paths)
        written = write_report(docs, paths, request.html, request.rep, comparison)
    else:
        doc = parse_result(data, path)
        warn_incomplete([doc], [path])
        written = write_report([doc], [path], request.html, request.rep)
    print(f"wrote {written} ({_size(written)})")
    if request.open_browser:
        webbrowser.open(written.resolve().as_uri())
    return EXIT_OK


def warn_incomplete(docs: list[Result], paths: list[Path]) -> None:
    """One stderr line per incomplete result: a page of one is no measurement to rely on."""
    for doc, path in zip(docs, paths):
        note = incomplete_note(doc, path)
        if note is not None:
            print(f"warning: {note}", file=sys.stderr)


def incomplete_note(doc: Result, path: Path) -> str | None:
    """`reports/run.json is incomplete (<its error>); 3 reps`, or None for a complete one."""
    if doc.complete:
        return None
    why = doc.error or "no error recorded: still running, or killed before it could say"
    reps = sum(len(entry.reps) for entry in doc.scenarios)
    count = f"{reps} rep{'' if reps == 1 else 's'}" if reps else "no reps: the page has no figures"
    return f"{path} is incomplete ({why}); {count}"


def _size(path: Path) -> str:
    size = path.stat().st_size
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB"
