"""refresh_worker in a rep's figures: `refreshes` counts the queue's `refresh` events (absent
when none, so results written before read as they were), and the run table says it in one
line under the table."""

from __future__ import annotations

import json
from typing import Any

from jobbench.core.run.loop import add_rep
from jobbench.core.run.queue_figures import scenario_entry
from jobbench.results.model_base import to_json
from jobbench.results.store import new_document, parse_result
from tests.unit.test_render_run import DRAIN, EMBEDDED, ENV, drain_rep, rendered, rep_of


def with_refreshes(log: list[dict[str, Any]], jobs: list[str]) -> list[dict[str, Any]]:
    """The log with a `refresh` after each named job's `done`, as the queue logs one, and the
    runner's `refreshed` report of each worker after it."""
    out: list[dict[str, Any]] = []
    for event in log:
        out.append(event)
        if event["ev"] == "done" and event["job"] in jobs:
            keys = {"worker": event["worker"], "job": event["job"]}
            out.append({"t": event["t"], "ev": "refresh", **keys})
            out.append({"t": event["t"] + 1, "ev": "refreshed", "worker": event["worker"], "rc": 0})
    return out


def test_refreshes_count_the_refresh_events_and_leave_every_other_figure_alone() -> None:
    plain = rep_of(DRAIN, drain_rep(DRAIN, 1)).figures
    asked = rep_of(DRAIN, with_refreshes(drain_rep(DRAIN, 1), ["job-1", "job-6"])).figures
    assert asked.pop("refreshes") == 2
    assert asked == plain
    assert "refreshes" not in plain


def test_a_run_with_refreshes_says_how_many_per_rep_under_its_table() -> None:
    doc = new_document("main", EMBEDDED, ENV)
    entry = scenario_entry(DRAIN, None)
    samples: list[Any] = []
    for rep, refreshed in ((1, ["job-2"]), (2, []), (3, ["job-0", "job-4", "job-7"])):
        add_rep(entry, rep_of(DRAIN, with_refreshes(drain_rep(DRAIN, rep), refreshed)), samples)
    doc.scenarios.append(entry)
    doc.complete = True
    out = rendered(doc)
    assert "refreshed workers (refresh_worker) per rep: 1, 0, 3" in " ".join(out.split())
    again = parse_result(to_json(doc), "reports/main.json")  # as the writer and reader do
    assert [rep.refreshes for rep in again.scenarios[0].reps] == [1, None, 3]


def test_a_run_without_refreshes_says_nothing_of_them() -> None:
    doc = new_document("main", EMBEDDED, ENV)
    entry = scenario_entry(DRAIN, None)
    add_rep(entry, rep_of(DRAIN, drain_rep(DRAIN, 1)), [])
    doc.scenarios.append(entry)
    assert "refresh" not in rendered(doc)
    assert "refreshes" not in json.dumps(to_json(doc))  # as files were before
