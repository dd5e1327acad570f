"""Where a name's result is (the one rule `compare` saves by and `compare` / `report` find by),
and the one reader and writer of result and comparison documents on files of every format."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from jobbench.commands.report import ReportRequest, report_command
from jobbench.core.run.loop import mark_failed
from jobbench.core.run.queue_figures import scenario_entry
from jobbench.errors import ResultsError
from jobbench.results import store
from jobbench.results.model import (
    DEFAULT_METRIC,
    Comparison,
    CpuPlan,
    Result,
    TargetBlock,
    to_json,
)
from jobbench.results.store import (
    find_result,
    new_document,
    read_comparison,
    read_result,
    safe_label,
    write_document,
)
from tests.unit.test_render_run import DRAIN

LATENCY = {"take": 0.01, "wake": 0.01, "hold": 20.0, "done": 0.0}


def test_find_result_uses_the_label_a_run_is_saved_under(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = Path("reports")
    assert safe_label("feature/take ahead") == "feature-take-ahead"
    assert find_result("feature/take ahead", out) == out / "feature-take-ahead.json"
    assert find_result("a-vs-b.json", out) == out / "a-vs-b.json"  # a file name in out
    assert find_result("old/run.json", out) == Path("old/run.json")  # no guess elsewhere
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "run.json").write_text("{}")
    assert find_result("old/run.json", out) == Path("old/run.json")
    (tmp_path / "main").write_text("{}")
    assert find_result("main", out) == Path("main")  # an existing file as given


# --- the one reader and writer, on files of every format jobbench wrote (tests/unit/data) -------

DATA = Path(__file__).parent / "data"
RESULTS = ["old-a.json", "old-b.json", "live.json", "no-reps.json", "result-6ebcdd1.json"]
COMPARISONS = ["old-a-vs-old-b.json", "golden-comparison.json", "comparison1-old-a-vs-old-b.json"]


@pytest.mark.parametrize("name", RESULTS)
def test_a_result_reads_and_writes_back_byte_for_byte(name: str, tmp_path: Path) -> None:
    doc = read_result(DATA / name)
    assert isinstance(doc, Result)
    written = write_document(doc, tmp_path / name)
    assert written.read_text() == (DATA / name).read_text()  # keys, order, ints and floats
    assert json.loads(written.read_text()) == json.loads((DATA / name).read_text())
    assert read_result(written) == doc


@pytest.mark.parametrize("name", COMPARISONS)
def test_a_comparison_reads_and_writes_back_byte_for_byte(name: str, tmp_path: Path) -> None:
    doc = read_comparison(DATA / name)
    assert isinstance(doc, Comparison)
    written = write_document(doc, tmp_path / name)
    assert written.read_text() == (DATA / name).read_text()
    assert json.loads(written.read_text()) == json.loads((DATA / name).read_text())
    assert read_comparison(written) == doc


def test_typed_access_after_the_reader() -> None:
    doc = read_result(DATA / "old-b.json")
    entry = doc.scenarios[0]
    assert entry.params.policy == "take-ahead" and entry.params.latency == LATENCY
    assert entry.summary["time_to_p99_s"] is not None and len(entry.reps) == 3
    rep = entry.reps[0]
    assert rep.jobs.completed == 16 and rep.phases.e2e is not None and rep.takes.count
    assert rep.submission is None and rep.partial is None  # fake-queue reps: no live blocks
    assert entry.pooled_phases is not None and entry.outliers is not None
    live = read_result(DATA / "live.json").scenarios[0]
    assert [r.partial for r in live.reps] == [None, "interrupted"]
    first = live.reps[0]
    assert first.submission is not None and first.submission.throttled == 3
    assert first.health is not None and first.health.samples[0] == [1.0, 8, 2, 2, 0]
    assert first.follow is not None and first.jobs.unknown == 1 and live.params.latency is None
    assert live.gate_metric is None and "gate_metric" not in to_json(live)  # never written


def test_files_from_before_a_field_existed_read_and_stay_without_it() -> None:
    """result-6ebcdd1.json: before phase means, outliers and the gated metric; comparison/1:
    before the decision rule (p_value, no reps, metric, spread, clean, excluded...)."""
    old = read_result(DATA / "result-6ebcdd1.json").scenarios[0]
    assert old.gate_metric is None and old.outliers is None
    assert old.reps[0].phases.e2e is not None and old.reps[0].phases.e2e.mean is None
    saved = to_json(old)
    assert "outliers" not in saved and "gate_metric" not in saved
    assert "mean" not in saved["reps"][0]["phases"]["e2e"]
    v1 = read_comparison(DATA / "comparison1-old-a-vs-old-b.json")
    row = v1.rows[0]
    assert (
        v1.schema_ == "jobbench.comparison/1" and row.metric is None and row.gated == DEFAULT_METRIC
    )
    metric = row.metrics["time_to_p99_s"]
    assert metric.p_value == 0.1 and metric.spread is None and metric.excluded == []
    assert v1.gate is not None and v1.gate.metric == DEFAULT_METRIC and v1.gate.metrics is None
    assert set(to_json(row)) == set(json.loads((DATA / row_file(v1)).read_text())["rows"][0])


def row_file(comparison: Comparison) -> str:
    return f"comparison1-{comparison.baseline.label}-vs-{comparison.candidate.label}.json"


def test_a_new_document_has_exactly_the_keys_todays_writer_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """no-reps.json was written by the code before the models: one scenario, no rep ran."""
    # git and uname are processes, which unit tests never start
    monkeypatch.setattr(store, "_git_sha", lambda: None)
    monkeypatch.setattr(store.platform, "platform", lambda: "Linux")
    doc = new_document(
        "cut", TargetBlock(kind="fake", endpoint="embedded"), store.environment(None)
    )
    doc.scenarios.append(scenario_entry(DRAIN, None))
    mark_failed([doc], "interrupted (Ctrl-C) before every rep ran", interrupted=True)
    expected = json.loads((DATA / "no-reps.json").read_text())
    got = to_json(doc)
    assert list(got) == list(expected) and list(got["environment"]) == list(expected["environment"])
    for key in ("created", "environment"):
        del got[key], expected[key]
    assert json.dumps(got) == json.dumps(expected)  # no key more, none as null, in order


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d["scenarios"][0]["reps"][2].update(time_to_p99_s="slow"),
         "scenarios.0.reps.2.time_to_p99_s: Input should be a valid number"),
        (lambda d: d["scenarios"][0]["reps"][0].update(time_to_p99_s=True),
         "scenarios.0.reps.0.time_to_p99_s: Input should be a valid number"),
        (lambda d: d["scenarios"][0]["reps"][1].pop("jobs"),
         "scenarios.0.reps.1.jobs: Field required"),
        (lambda d: d["scenarios"][0]["reps"][1]["jobs"].update(completed=15.5),
         "scenarios.0.reps.1.jobs.completed: Input should be a valid integer"),
        (lambda d: d["scenarios"][0]["params"]["latency"].update(take="0.5"),
         "scenarios.0.params.latency.take.seconds: Input should be a valid number"),
        (lambda d: d.update(scenarios={}), "scenarios: Input should be a valid list"),
        (lambda d: d.update(complete="yes"), "complete: Input should be a valid boolean"),
    ],
)  # fmt: skip
def test_a_bad_field_is_a_one_line_results_error_naming_file_and_field(
    change: Callable[[dict[str, Any]], object], said: str, tmp_path: Path
) -> None:
    data = json.loads((DATA / "old-a.json").read_text())
    change(data)
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError) as raised:
        read_result(path)
    assert str(raised.value) == f"{path}: {said}"
    assert raised.value.exit_code == 2


def test_schema_checks_come_first_with_their_messages(tmp_path: Path) -> None:
    data = json.loads((DATA / "old-a.json").read_text())
    path = tmp_path / "x.json"
    path.write_text(json.dumps({**data, "schema": "jobbench.result/9", "scenarios": 3}))
    with pytest.raises(
        ResultsError, match=r"schema 'jobbench\.result/9' is not 'jobbench\.result/1'"
    ):
        read_result(path)
    path.write_text(json.dumps({k: v for k, v in data.items() if k != "schema"}))
    with pytest.raises(ResultsError, match='not a jobbench result \\(no "schema" key\\)'):
        read_result(path)
    with pytest.raises(ResultsError, match=r"is not 'jobbench\.comparison/2'"):
        read_comparison(DATA / "old-a.json")


def test_unknown_keys_are_kept_not_dropped(tmp_path: Path) -> None:
    data = json.loads((DATA / "old-a.json").read_text())
    data["note"] = "re-run after the kernel update"
    data["scenarios"][0]["reps"][0]["load1"] = 0.42
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    written = write_document(read_result(path), tmp_path / "y.json")
    assert written.read_text() == path.read_text()


def test_what_the_code_sets_is_written_and_checked() -> None:
    doc = read_result(DATA / "result-6ebcdd1.json")
    entry = doc.scenarios[0]
    entry.outliers = {"time_to_p99_s": []}
    assert to_json(entry)["outliers"] == {"time_to_p99_s": []}
    doc.environment.learn({"runpod": "1.12.0", "cpu_plan": {"queue": [1], "workers": [0]}})
    assert doc.environment.cpu_plan == CpuPlan(queue=[1], workers=[0])
    with pytest.raises(ValidationError):
        entry.reps[0].time_to_p99_s = "fast"  # type: ignore[assignment]


def test_a_clusters_placement_gathers_the_workers_of_every_row() -> None:
    """Rows in lanes each place their workers; the result's cluster block names them all."""
    doc = read_result(DATA / "result-6ebcdd1.json")

    def placed(*nodes: tuple[str, list[str]]) -> dict[str, Any]:
        return {
            "address": "10.0.0.5:6379",
            "queue_host": "10.0.0.2",
            "worker_cpus": 1,
            "nodes": [{"id": n, "ip": "10.0.0.7", "cpus": 2, "workers": w} for n, w in nodes],
        }

    doc.environment.learn({"cluster": placed(("a", ["one-w0"]), ("b", []))})
    doc.environment.learn({"cluster": placed(("a", ["two-w1"]), ("b", ["two-w0"]))})
    doc.environment.learn({"cluster": placed(("c", ["three-w0"]))})  # a node that joined
    cluster = doc.environment.cluster
    assert cluster is not None
    assert {node.id: node.workers for node in cluster.nodes} == {
        "a": ["one-w0", "two-w1"],
        "b": ["two-w0"],
        "c": ["three-w0"],
    }


def test_report_renders_comparison_1_and_2_files(tmp_path: Path) -> None:
    for name in ("comparison1-old-a-vs-old-b.json", "old-a-vs-old-b.json"):
        report_command(ReportRequest(str(DATA / name), tmp_path / "r.html"))
        page = (tmp_path / "r.html").read_text()
        assert "A = old-a" in page and "B = old-b" in page and "<h2>Comparison</h2>" in page
        assert "plots need the events file" in page  # the fixtures keep no events
