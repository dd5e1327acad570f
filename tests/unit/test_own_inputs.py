"""A scenario whose jobs ran the user's inputs (--input, --inputs): jobbench does not know how
long such a job lasts, so no document shows an ideal or an efficiency for it (the figures, the
terminal's table, footer and legend, the HTML page, a comparison in every format), while the
same scenario of jobbench's own jobs shows both. The event logs are measured as a run measures
them (tests/unit/test_render_run.py); the real run is tests/e2e/test_cli_run.py's."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path

from jobbench.commands.report import ReportRequest, report_command
from jobbench.core.scenario.config import Scenario
from jobbench.core.sim.sim_target import SimTarget
from jobbench.measure import metrics
from jobbench.render import renderer
from jobbench.render.words.explain import IDEAL_LEGEND, OWN_INPUTS_LEGEND, OWN_INPUTS_LINE
from jobbench.results.compare import compare_docs
from jobbench.results.gate import GateConfig, judge
from jobbench.results.model import Comparison, Result
from jobbench.results.store import new_document, write_document
from tests.unit.test_render_run import DRAIN, EMBEDDED, ENV, drain_rep, measured, rendered

OWN = replace(DRAIN, inputs=({"x": 1},))


def run_of(s: Scenario) -> Result:
    """Three reps of `s`, as a run saves them."""
    doc = new_document("mine", EMBEDDED, ENV)
    doc.scenarios.append(measured(s, [drain_rep(s, rep) for rep in (1, 2, 3)]))
    doc.complete = True
    return doc


def flat(text: str) -> str:
    """Whitespace as one space: the terminal wraps the footer and the legend at its width."""
    return " ".join(text.split())


def test_its_figures_have_no_ideal_and_no_efficiency_and_every_other_figure() -> None:
    own, ours = run_of(OWN).scenarios[0], run_of(DRAIN).scenarios[0]
    assert ours.ideal_s is not None and ours.summary["efficiency"] is not None
    assert own.ideal_s is None and own.summary["efficiency"] is None
    assert all(rep.ideal_s is None and rep.efficiency is None for rep in own.reps)
    assert own.params.inputs == 1 and ours.params.inputs is None  # they never pair
    for key in ("time_to_p99_s", "throughput_jps", "service_p99_s"):
        assert own.summary[key] == ours.summary[key]


def test_an_arrival_profile_of_them_has_its_steady_figures_but_no_ideal() -> None:
    log = drain_rep(DRAIN, 1)
    sizes = {"workers": 2, "slots": 2, "burst": 8, "wake_latency_s": 0.005}
    known = metrics.rep_measure(log, job_seconds=0.5, atomic_burst=False, **sizes).figures
    unknown = metrics.rep_measure(log, job_seconds=None, atomic_burst=False, **sizes).figures
    assert known["efficiency"] is not None and known["steady"]["ideal_e2e_p99_s"] is not None
    assert unknown["efficiency"] is None and "ideal_e2e_p99_s" not in unknown["steady"]
    assert unknown["steady"]["e2e_p99_s"] == known["steady"]["e2e_p99_s"]


def test_the_header_says_the_jobs_are_the_users_not_their_length() -> None:
    assert OWN.describe_jobs() == "8 jobs (your inputs)"
    assert DRAIN.describe_jobs() == "8 x 0.5 s jobs"
    header = SimTarget().header([OWN], 3)
    assert "8 jobs (your inputs); 3 reps" in header and "0.5 s" not in header


def test_the_terminal_says_why_it_shows_no_ideal_and_no_efficiency() -> None:
    ours = flat(rendered(run_of(DRAIN)))
    assert flat(IDEAL_LEGEND) in ours and re.search(r"efficiency \d+\.\d%", ours)
    text = flat(rendered(run_of(OWN)))
    assert flat(OWN_INPUTS_LINE) in text and flat(OWN_INPUTS_LEGEND) in text
    rest = text.replace(flat(OWN_INPUTS_LINE), "").replace(flat(OWN_INPUTS_LEGEND), "")
    for word in ("ideal", "efficiency", "--job-seconds", "expects"):
        assert word not in rest, word


def test_the_page_says_the_jobs_are_the_users_and_has_no_ideal(tmp_path: Path) -> None:
    pages = {}
    for name, s in (("ours", DRAIN), ("own", OWN)):
        result = write_document(run_of(s), tmp_path / f"{name}.json")
        report_command(ReportRequest(str(result), tmp_path / f"{name}.html"))
        pages[name] = (tmp_path / f"{name}.html").read_text()
    assert "8 jobs of 0.5 s" in pages["ours"] and "<dt>efficiency</dt>" in pages["ours"]
    page = pages["own"]
    assert "8 jobs (your inputs)" in page and "0.5 s" not in page
    assert "<dt>job length</dt>" in page
    assert "<dt>ideal</dt>" not in page and "<dt>efficiency</dt>" not in page


def compared(s: Scenario) -> Comparison:
    doc = compare_docs(run_of(s), run_of(s))
    judge(doc, GateConfig())
    return doc


def formatted(comparison: Comparison, fmt: str) -> str:
    out = io.StringIO()
    renderer(fmt)(comparison, out, 400, True)
    return out.getvalue()


def ideal_cells(markdown: str) -> list[str]:
    """The wide table's ideal, eff A and eff B of the row (the three before the verdict)."""
    (line,) = [line for line in markdown.splitlines() if line.startswith("| 2w-8j-0.5s |")][1:]
    return [cell.strip() for cell in line.strip("|").split("|")][-4:-1]


def test_a_comparison_of_them_shows_no_ideal_and_no_efficiency() -> None:
    ours, own = compared(DRAIN), compared(OWN)
    assert all(cell != "-" for cell in ideal_cells(formatted(ours, "markdown")))
    assert ideal_cells(formatted(own, "markdown")) == ["-", "-", "-"]
    (row,) = json.loads(formatted(own, "json"))["rows"]
    assert row["ideal_s"] is None
    assert row["efficiency"] == {"baseline": None, "candidate": None}
    assert row["params"]["inputs"] == 1
    table = [line.strip() for line in formatted(own, "table").splitlines()]
    (line,) = [line for line in table if line.startswith("2w-8j-0.5s ")]
    assert re.split(" {2,}", line)[-4:] == ["-", "-", "-", "inconclusive"]
    header, *lines = list(csv.reader(io.StringIO(formatted(own, "csv"))))
    assert not any("efficiency" in cell or "ideal" in cell for cell in header)
    assert {line[1] for line in lines}.isdisjoint({"efficiency", "ideal_s"})
