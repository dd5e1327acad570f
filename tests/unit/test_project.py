"""jobbench.toml: a value of the wrong type is a usage error naming the file, the key and a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobbench.core.scenario.project import STEADY_CAPACITY_JPS, load_project, pick_suite
from jobbench.errors import UsageError
from tests.unit.cli import run_cli

SUITE = """
[suites.s]
reps = {reps}
scenarios = [{{name = "a", workers = {workers}, burst = 8, job_seconds = {job_seconds}}}]

[variants.v]
worker = "model"
policy = "take-ahead"
take_ahead = {take_ahead}
"""
GOOD = {"reps": "3", "workers": "2", "job_seconds": "0.5", "take_ahead": "4"}


def write(folder: Path, **changes: str) -> Path:
    (folder / "jobbench.toml").write_text(SUITE.format(**{**GOOD, **changes}))
    return folder


def test_well_typed_values_load(tmp_path: Path) -> None:
    project = load_project(write(tmp_path, workers="2.0"))  # a whole float is a whole number
    assert project.suites["s"].reps == 3 and project.suites["s"].scenarios[0].workers == 2
    assert project.variants["v"].worker.take_ahead == 4


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("workers", '"four"', "suites.s: scenario 1: workers = 'four' is not a whole number"),
        ("workers", "2.5", "workers = 2.5 is not a whole number; write e.g. workers = 4"),
        ("job_seconds", '"slow"', "job_seconds = 'slow' is not a number of seconds"),
        ("reps", "true", "suites.s: reps = True is not a whole number; write e.g. reps = 5"),
        ("take_ahead", '"lots"', "variants.v: take_ahead = 'lots' is not a whole number"),
    ],
)
def test_a_value_of_the_wrong_type_names_file_key_and_fix(
    tmp_path: Path, key: str, value: str, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        load_project(write(tmp_path, **{key: value}))
    assert str(caught.value).startswith(str(tmp_path / "jobbench.toml"))
    assert message in str(caught.value)


def test_gate_exits_2_not_1_on_a_bad_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli(monkeypatch, "gate", "main", "pr", cwd=write(tmp_path, workers='"four"'))
    err = capsys.readouterr().err
    assert code == 2 and "workers = 'four'" in err
    assert err.startswith("error: ") and err.count("\n") == 1  # one line, no traceback


def test_a_suite_and_its_scenarios_set_the_gated_metric(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(
        '[suites.s]\nmetric = "e2e_p99_s"\nscenarios = [{name = "a"}, '
        '{name = "b", metric = "e2e_mean_s"}]\n'
    )
    suite = load_project(tmp_path).suites["s"]
    assert [suite.metric_for("a"), suite.metric_for("b"), suite.metric_for("c")] == [
        "e2e_p99_s",
        "e2e_mean_s",
        None,
    ]


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[suites.s]\nmetric = "speed"\nscenarios = [{name = "a"}]', "metric = 'speed'; use"),
        ('[suites.s]\nscenarios = [{name = "a"}, {name = "a"}]', "['a'] given twice"),
        ('[suites.s]\nrep = 3\nscenarios = [{name = "a"}]', "unknown key(s) ['rep']"),
        ("[variants.v]\nenv = {A = [1]}", 'env must be a table of NAME = "value"'),
    ],
)
def test_a_malformed_suite_or_variant_names_the_fix(
    tmp_path: Path, toml: str, message: str
) -> None:
    (tmp_path / "jobbench.toml").write_text(toml + "\n")
    with pytest.raises(UsageError) as caught:
        load_project(tmp_path)
    assert message in str(caught.value)


def test_the_example_config_loads(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "jobbench.toml"
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "jobbench.toml").write_text(example.read_text())
    for checkout in ("runpod-python-main", "runpod-python-pr"):  # what its variants name
        (tmp_path / checkout).mkdir()
    project = load_project(tmp_path / "cfg")
    assert project.suites["deep"].metric_for("4w-64j-shallow") == "e2e_mean_s"


def test_a_tool_jobbench_that_is_not_a_table_is_not_silently_ignored(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool]\njobbench = "seed"\n')
    with pytest.raises(UsageError, match=r"\[tool\.jobbench\] must be a table"):
        load_project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\n')
    assert load_project(tmp_path).source is None  # no [tool.jobbench] at all: the built-ins


MIXED = """
[suites.mixed]
reps = 1
scenarios = [
  {name = "deep", workers = 2, burst = 64, job_seconds = 0.5},
  {name = "steady", workers = 2, load = "rate:20/s:for:2s", job_seconds = 0.5},
]
"""


def test_a_suite_can_mix_bursts_and_profiles(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(MIXED)
    deep, steady = load_project(tmp_path).suites["mixed"].scenarios
    assert deep.is_burst and deep.burst == 64 and "load" not in deep.params()
    assert not steady.is_burst and steady.burst == 40
    assert steady.params()["load"] == "rate:20/s:for:2s"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ('load = "rate:20:for:2s"', "scenario 1: load rate:20:for:2s: '20' is not a rate"),
        ("load = 40", "scenario 1: load must be one profile string"),
        ('load = "rate:20/s:for:2s", burst = 8', "instead of burst"),
    ],
)
def test_a_bad_load_in_a_suite_names_the_row(tmp_path: Path, row: str, message: str) -> None:
    (tmp_path / "jobbench.toml").write_text(
        f'[suites.s]\nscenarios = [{{name = "a", workers = 2, {row}}}]\n'
    )
    with pytest.raises(UsageError) as caught:
        load_project(tmp_path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_builtin_steady_suite_runs_the_reference_fleet_at_shares_of_its_capacity(
    tmp_path: Path,
) -> None:
    suite = load_project(tmp_path).suites["steady"]
    rates = []
    for scenario in suite.scenarios:
        assert (scenario.workers, scenario.slots, scenario.job_seconds) == (4, 32, 0.5)
        assert scenario.metric == "steady_e2e_p99_s" and not scenario.is_burst
        if scenario.load_spec and scenario.load_spec.startswith("poisson:"):
            rates.append(float(scenario.load_spec.split(":")[1].removesuffix("/s")))
    assert rates == [round(STEADY_CAPACITY_JPS * share) for share in (0.25, 0.5, 0.9)]
    assert suite.scenarios[-1].load.jobs == 10 * 192  # a burst every 2 s for 20 s


def test_a_suite_or_its_row_sets_an_autoscaled_fleet(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(
        """
[suites.auto]
autoscale = "queue-delay=4,active=1"
scenarios = [
  {name = "qd", workers = 3, burst = 64},
  {name = "rc", workers = 5, burst = 64, autoscale = "request-count=16,idle=2"},
  {name = "fixed", workers = 2, burst = 64},
]
"""
    )
    qd, rc, fixed = load_project(tmp_path).suites["auto"].scenarios
    assert qd.fleet is not None and qd.fleet.scaler == "queue-delay" and qd.fleet.max_workers == 3
    assert rc.fleet is not None and rc.fleet.scaler_value == 16 and rc.fleet.idle_timeout_s == 2
    assert rc.fleet.active == 0 and rc.fleet.max_workers == 5  # the row's spec, whole
    assert fixed.fleet is not None  # the suite's default applies to every row
    assert qd.worker_ids() == ["qd-w0"] and qd.params()["fleet"]["active"] == 1


def test_a_bad_autoscale_in_a_suite_names_the_file_row_and_key(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(
        '[suites.x]\nscenarios = [{name = "a", autoscale = "queue-delay=4,active=7"}]\n'
    )
    with pytest.raises(UsageError) as caught:
        load_project(tmp_path)
    text = str(caught.value)
    assert "suites.x: scenario 1: autoscale" in text and "active" in text and "\n" not in text


def test_the_builtin_autoscale_suite_is_there() -> None:
    suite = load_project(Path("/nonexistent")).suites["autoscale"]
    assert len(suite.scenarios) == 6
    assert all(s.fleet is not None and s.fleet.active == 1 for s in suite.scenarios)


def test_compare_and_gate_run_the_gate_suite_unless_told_the_seed_rows_and_a_trickle(
    tmp_path: Path,
) -> None:
    project = load_project(tmp_path)
    suite = pick_suite(project, None)
    assert suite.name == "gate"
    seed = pick_suite(project, "seed")  # the reference table's suite stays there by name
    assert suite.scenarios[: len(seed.scenarios)] == seed.scenarios
    (trickle,) = suite.scenarios[len(seed.scenarios) :]
    assert (trickle.workers, trickle.slots, trickle.job_seconds) == (1, 8, 2.0)
    assert trickle.load_spec == "poisson:1/s:for:20s" and trickle.metric == "steady_e2e_p99_s"
    assert trickle.slots_by_default  # 8 is the SDK's design: a command needs a suite of its own


def test_a_suite_or_its_row_scales_the_watchdogs_stall_bound(tmp_path: Path) -> None:
    (tmp_path / "jobbench.toml").write_text(
        '[suites.s]\nstall_after = 1\nscenarios = [{name = "a"}, {name = "b", stall_after = 2.5}]\n'
        '[suites.bad]\nscenarios = [{name = "c", stall_after = 0.1}]\n'
    )
    with pytest.raises(UsageError) as caught:
        load_project(tmp_path)
    assert "suites.bad: scenario c: stall_after = 0.1: use 0.5 to 3600 seconds" in str(caught.value)
    (tmp_path / "jobbench.toml").write_text(
        '[suites.s]\nstall_after = 1\nscenarios = [{name = "a"}, {name = "b", stall_after = 2.5}]\n'
    )
    a, b = load_project(tmp_path).suites["s"].scenarios
    assert (a.stall_s, b.stall_s) == (1.0, 2.5)


FIXES = """
[tool.jobbench.suites.fixes]
latency = {take = 0.5}
scenarios = [{name = "deep", workers = 1, burst = 64, job_seconds = 0.5}]

[tool.jobbench.variants.fixed-server]
worker = "model"
policy = "drain"
latency = {take = 0.03, take_extra = 32}

[tool.jobbench.variants.sdk-pr]
worker = "model"
policy = "sdk-take-ahead"
take_ahead = 32

[tool.jobbench.variants.cache]
worker = "model"
policy = "job-cache"
"""


def test_each_fix_is_a_variant_the_sdk_fixes_by_policy_the_server_by_its_latency(
    tmp_path: Path,
) -> None:
    from jobbench.core.scenario.project import apply_variant

    (tmp_path / "pyproject.toml").write_text(FIXES)
    project = load_project(tmp_path)
    suite = project.suites["fixes"]
    (server,) = apply_variant(suite, project.variants["fixed-server"])
    assert (server.latency.take.a, server.latency.take_extra) == (0.03, 32)
    assert server.worker.policy == "drain"
    (pr,) = apply_variant(suite, project.variants["sdk-pr"])
    assert (pr.worker.policy, pr.worker.take_ahead, pr.latency.take_extra) == (
        "sdk-take-ahead",
        32,
        0,
    )
    (cache,) = apply_variant(suite, project.variants["cache"])
    assert cache.worker.policy == "job-cache"
