"""`jobbench compare` and `jobbench gate`: resolve both sides, run what must run (interleaved),
compare, judge, save `<A>-vs-<B>.json/.md`, render, exit code."""

from __future__ import annotations

import io
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jobbench.benchmark import Plan, run_plans
from jobbench.compare import compare_docs
from jobbench.config import RunConfig
from jobbench.errors import EXIT_OK, UsageError
from jobbench.gate import GateConfig, judge
from jobbench.project import Project, Suite, apply_variant, load_project
from jobbench.render import FORMATS, renderer
from jobbench.resolve import Side, resolve
from jobbench.results import result_path, write_json


@dataclass(frozen=True)
class CompareRequest:
    baseline: str
    candidate: str
    suite: str | None = None
    reps: int | None = None
    fmt: str = "table"
    out: Path = Path("reports")
    repo: Path | None = None
    rerun: bool = False
    gate: GateConfig = field(default_factory=GateConfig)
    fail_on_regression: bool = False
    markdown_file: Path | None = None
    folder: Path = Path(".")
    html: Path | None = None
    pin_queue: bool = True


def safe_label(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", Path(name).stem if name.endswith(".json") else name)


def pick_suite(project: Project, name: str | None) -> Suite:
    key = name or "seed"
    if key not in project.suites:
        raise UsageError(
            f"--suite {key}: no such suite; known: {', '.join(sorted(project.suites))}"
        )
    return project.suites[key]


def run_sides(
    sides: list[Side], suite: Suite, request: CompareRequest, progress: Any
) -> list[dict[str, Any]]:
    """Saved sides as they are; the rest run now, interleaved rep by rep."""
    reps = request.reps or suite.reps
    if reps < 1:
        raise UsageError(f"--reps {reps}: must be >= 1")
    plans = [
        Plan(
            RunConfig(
                scenarios=apply_variant(suite, s.variant),
                reps=reps,
                label=safe_label(s.name),
                out=request.out,
                pin_queue=request.pin_queue,
            )
        )
        for s in sides
        if s.variant is not None
    ]
    ran = iter(run_plans(plans, progress) if plans else [])
    return [s.doc if s.doc is not None else next(ran) for s in sides]


def compare_command(request: CompareRequest, progress: Any) -> int:
    if request.fmt not in FORMATS:
        raise UsageError(f"--format {request.fmt}: use one of {', '.join(FORMATS)}")
    request.gate.validate()
    project = load_project(request.folder)
    sides = [
        resolve(name, project, request.out, request.repo, request.rerun)
        for name in (request.baseline, request.candidate)
    ]
    for label, side in zip("AB", sides):
        progress.message(f"{label} = {side.name}: {side.origin}")
    suite = pick_suite(project, request.suite)
    docs = run_sides(sides, suite, request, progress)
    comparison = compare_docs(docs[0], docs[1])
    code = judge(comparison, request.gate)
    stem = f"{safe_label(docs[0]['label'])}-vs-{safe_label(docs[1]['label'])}"
    write_json(comparison, request.out / f"{stem}.json")
    markdown = _markdown(comparison)
    (request.out / f"{stem}.md").write_text(markdown)
    if request.markdown_file is not None:
        request.markdown_file.write_text(markdown)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file and request.fail_on_regression:
        with open(summary_file, "a") as handle:
            handle.write(markdown + "\n")
    renderer(request.fmt)(comparison, sys.stdout, _width())
    if request.html is not None:
        from jobbench.report_command import write_report

        paths = [s.path or result_path(request.out, safe_label(s.name)) for s in sides]
        written = write_report(docs, paths, request.html, None, comparison)
        progress.message(f"html report: {written}")
    return code if request.fail_on_regression else EXIT_OK


def _markdown(comparison: dict[str, Any]) -> str:
    buffer = io.StringIO()
    renderer("markdown")(comparison, buffer)
    return buffer.getvalue()


def _width() -> int:
    try:
        return max(100, os.get_terminal_size().columns)
    except OSError:
        return 160
