"""`jobbench run --target sim` (core/sim/sim_target.py, core/sim/engine.py): the real CLI in this
process, where starting any process fails the test (tests/unit/conftest.py), so a simulated run
provably starts none. It gives the model's cells, names the model a runpod worker ran as, is marked
simulated in the result, the table and the page, and repeats bit for bit for one seed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jobbench.core.sim.sdk_costs import JOB_END_CPU_S, LOOP_LATE_MAX_S
from jobbench.errors import EXIT_OK, EXIT_USAGE
from jobbench.measure.analytic import expected_time_s
from jobbench.results import store
from jobbench.workers.policy_sdk112 import PICKUP_S
from tests.unit.cli import run_cli

REFERENCE = ("--take-latency", "0.5", "--wake-latency", "0.05", "--hold", "20", "--reps", "1")


@pytest.fixture(autouse=True)
def no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    # git and uname are processes, which unit tests never start
    monkeypatch.setattr(store, "_git_sha", lambda: "0" * 40)
    monkeypatch.setattr(store.platform, "platform", lambda: "Linux")


def simulate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *args: str, label: str = "sim"
) -> dict[str, Any]:
    code = run_cli(
        monkeypatch, "run", "--target", "sim", *args, "--label", label, "--quiet", cwd=tmp_path
    )
    assert code == EXIT_OK
    doc: dict[str, Any] = json.loads((tmp_path / "reports" / f"{label}.json").read_text())
    return doc


@pytest.mark.parametrize(
    ("flags", "p99_s"),
    [
        (("-w", "1", "-b", "512", "--job-seconds", "0.5", "--policy", "drain"), 15.55),
        (("-w", "1", "-b", "512", "--job-seconds", "0.5", "--take-ahead", "32"), 8.05),
        (("-w", "1", "-b", "256", "--job-seconds", "2", "--policy", "drain"), 19.55),
        (("-w", "4", "-b", "1024", "--job-seconds", "0.5", "--take-ahead", "32"), 4.05),
    ],
)
def test_the_reference_cells_to_the_microsecond(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flags: tuple[str, ...], p99_s: float
) -> None:
    doc = simulate(monkeypatch, tmp_path, "--worker", "model", *flags, *REFERENCE)
    assert doc["target"] == {"kind": "sim", "endpoint": "virtual time"}
    (entry,) = doc["scenarios"]
    assert entry["simulated"] == entry["params"]["policy"]
    (rep,) = entry["reps"]
    assert rep["time_to_p99_s"] == pytest.approx(p99_s, abs=1e-6)
    assert rep["jobs"]["completed"] == int(flags[3])


def test_a_runpod_worker_runs_as_its_sdk_112_model_with_the_sdks_own_costs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The analytic first batch ends at wake + job; the SDK's model ends later, by where its
    runner's 0.1 s tick stood when the burst came (drawn: 0 to PICKUP_S), by its loop's
    lateness (up to 1 ms a wait) and by at most a batch's job ends on the worker's core
    (core/sim/sdk_costs.py, docs/simulation.md). Each rep draws its own tick."""
    code = run_cli(
        monkeypatch, "run", "--target", "sim", "-w", "1", "-b", "512", *REFERENCE[:-1], "3",
        "--seed", "5", cwd=tmp_path,
    )  # fmt: skip
    assert code == EXIT_OK
    shown = capsys.readouterr()
    assert "runpod SDK worker, no take-ahead, simulated by model sdk-1.12" in shown.out
    assert "simulated in virtual time (no processes)" in shown.err  # the progress header
    doc = json.loads((tmp_path / "reports" / "run.json").read_text())
    (entry,) = doc["scenarios"]
    assert (entry["params"]["worker"], entry["simulated"], entry["sdk"]) == (
        "runpod",
        "sdk-1.12",
        None,
    )
    analytic = expected_time_s(
        "sdk-1.12", burst=512, workers=1, slots=32, job_seconds=0.5, take_s=0.5, wake_s=0.05
    )
    assert analytic == pytest.approx(23.05)
    gaps = [rep["time_to_p99_s"] - analytic for rep in entry["reps"]]
    # 15 rounds of a take and a 1 s re-check, each wait up to 1 ms late, and the first tick
    for gap in gaps:
        assert 0 < gap <= PICKUP_S + 40 * LOOP_LATE_MAX_S + 32 * JOB_END_CPU_S
    assert len(set(gaps)) == 3


def test_the_same_seed_gives_the_same_files_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    sampled = ("-w", "2", "-b", "300", "--worker", "model", "--take-latency", "uniform:0.4,0.6")
    files = []
    for label, seed in (("first", "7"), ("again", "7"), ("other", "8")):
        doc = simulate(monkeypatch, tmp_path, *sampled, "--reps", "2", "--seed", seed, label=label)
        assert doc["created"] == "2023-11-14T22:13:20+00:00"
        folder = tmp_path / "reports"
        label_line = f'"label": "{label}"'.encode()
        files.append((folder / f"{label}.json").read_bytes().replace(label_line, b""))
        files.append((folder / f"{label}.events.jsonl").read_bytes())
    assert files[0] == files[2] and files[1] == files[3]
    assert files[0] != files[4]  # another seed, other draws: the check above could fail
    reps = json.loads((tmp_path / "reports" / "first.json").read_text())["scenarios"][0]["reps"]
    assert reps[0]["time_to_p99_s"] != reps[1]["time_to_p99_s"]  # each rep draws its own


def test_the_page_says_simulated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    simulate(monkeypatch, tmp_path, "-w", "1", "-b", "64", "--worker", "model", "--html", "p.html")
    page = (tmp_path / "p.html").read_text()
    assert "simulated in virtual time" in page
    assert "model worker (drain), simulated in virtual time" in page


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--worker", "python h.py", "--slots", "1"), "--target sim: a --worker command"),
        (("--worker", "model", "--fault", "job-done:500:0.1"), "faults are not simulated yet"),
        (("--worker", "model", "--worker-fault", "kill:1"), "--worker-fault: faults are not"),
        (("--take-ahead", "8"), "sdk-1.12, which has no take-ahead"),
        (("--worker", "model", "--server", "http://127.0.0.1:9"), "--server: --target sim"),
        (("--worker", "model", "--endpoint", "abc"), "--endpoint: --target sim"),
    ],
)
def test_what_cannot_be_simulated_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    problem: str,
) -> None:
    (tmp_path / "h.py").write_text("")
    assert run_cli(monkeypatch, "run", "--target", "sim", *args, cwd=tmp_path) == EXIT_USAGE
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and problem in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "reports" / "run.json").exists()


def test_an_unknown_target_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(monkeypatch, "run", "--target", "live", cwd=tmp_path) == EXIT_USAGE
    assert "--target 'live': use fake or sim" in capsys.readouterr().err


SUITE = """
[suites.ref]
reps = 3
latency = {take = 0.5, wake = 0.05, hold = 20}
scenarios = [{name = "deep", workers = 1, slots = 32, burst = 512, job_seconds = 0.5}]
"""


def test_compare_and_gate_simulate_the_variants_that_run_now(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "jobbench.toml").write_text(SUITE)
    args = ("main", "pr", "--suite", "ref", "--target", "sim", "--quiet")
    assert run_cli(monkeypatch, "compare", *args, "--format", "json", cwd=tmp_path) == EXIT_OK
    reports = tmp_path / "reports"
    for label, p99_s in (("main", 15.55), ("pr", 8.05)):  # drain, take-ahead 32
        doc = json.loads((reports / f"{label}.json").read_text())
        assert doc["target"]["kind"] == "sim"
        assert {rep["time_to_p99_s"] for rep in doc["scenarios"][0]["reps"]} == {p99_s}
    comparison = json.loads((reports / "main-vs-pr.json").read_text())
    assert comparison["baseline"]["workers"] == ["model worker (drain), simulated"]
    change = comparison["rows"][0]["metrics"]["time_to_p99_s"]["change"]
    assert change == pytest.approx(8.05 / 15.55 - 1)
    assert run_cli(monkeypatch, "gate", *args, "--reps", "3", cwd=tmp_path) == EXIT_OK


def test_a_bad_source_date_epoch_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    code = run_cli(monkeypatch, "run", "--target", "sim", "--worker", "model", cwd=tmp_path)
    assert code == EXIT_USAGE
    assert "error: SOURCE_DATE_EPOCH='yesterday': not a whole number" in capsys.readouterr().err


def test_a_rate_profile_submits_each_job_at_its_intended_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    flags = ("--worker", "model", "--policy", "drain", "-w", "2", "--slots", "4")
    doc = simulate(monkeypatch, tmp_path, *flags, "--load", "rate:20/s:for:2s", *REFERENCE)
    (entry,) = doc["scenarios"]
    assert entry["name"] == "2w-rate-20-for-2s-0.5s"
    assert entry["params"]["load"] == "rate:20/s:for:2s" and entry["params"]["burst"] == 40
    (rep,) = entry["reps"]
    assert rep["jobs"]["completed"] == 40
    assert rep["ideal_s"] is None  # a burst's ideal, not this; the profile's is the steady one
    steady = rep["steady"]
    assert steady["ideal_e2e_p99_s"] >= 0.5 + 0.05  # a job's length and one wake at least
    assert rep["efficiency"] == steady["efficiency"]
    ratio = steady["ideal_e2e_p99_s"] / steady["e2e_p99_s"]
    assert rep["efficiency"] == pytest.approx(ratio, abs=1e-6)
    events = [json.loads(line) for line in (tmp_path / "reports" / "sim.events.jsonl").open()]
    submits = [e["t"] for e in events if e["ev"] == "submit"]
    assert submits == [i * 50_000 for i in range(40)]  # every 50 ms, in virtual time exactly


def test_a_burst_run_records_no_load_and_pairs_with_older_results(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    doc = simulate(monkeypatch, tmp_path, "--worker", "model", "-b", "64", *REFERENCE)
    (entry,) = doc["scenarios"]
    assert "load" not in entry["params"] and entry["reps"][0]["ideal_s"] is not None


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--load", "rate:40:for:1s"), "error: --load rate:40:for:1s: '40' is not a rate"),
        (
            ("--load", "rate:20000/s:for:100s", "--endpoint", "http://127.0.0.1:9/v2/x"),
            "error: --load rate:20000/s:for:100s: 2,000,000 jobs a rep; a rep takes at most",
        ),
        (  # the same bound and words on every target: the profile is what was given
            ("--load", "rate:20000/s:for:100s"),
            "error: --load rate:20000/s:for:100s: 2,000,000 jobs a rep; a rep takes at most",
        ),
    ],
)
def test_a_bad_load_is_a_one_line_usage_error(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    says: str,
) -> None:
    target = () if "--endpoint" in args else ("--target", "sim")
    assert run_cli(monkeypatch, "run", *target, "--worker", "model", *args, cwd=tmp_path) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1


def test_take_ahead_held_while_another_worker_idles_is_measured_and_shown(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # w0 claims the slow jobs, w1 the fast ones; take-ahead fills w0's buffer with slow jobs
    # that wait while w1, done with its fast ones, has free slots
    slow, fast = {"seconds": 2.0}, {"seconds": 0.2}
    (tmp_path / "inputs.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in [slow] * 4 + [fast] * 4)
    )
    flags = ("--worker", "model", "--take-ahead", "4", "-w", "2", "--slots", "4", "-b", "16")
    run_cli(monkeypatch, "run", "--target", "sim", *flags, "--inputs", "inputs.jsonl",
            *REFERENCE, "--label", "held", cwd=tmp_path)  # fmt: skip
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "reports" / "held.json").read_text())
    held = doc["scenarios"][0]["reps"][0]["held"]
    assert held["jobs"] > 0 and held["extra_wait_s"] > 0
    assert held["per_worker"]["2w-16j-0.5s-w0"]["jobs"] == held["jobs"]  # the slow worker's
    assert "held while a slot was free elsewhere:" in out


STEADY_SUITE = """
[suites.steady]
reps = 3
latency = {take = 0.5, wake = 0.05, hold = 20}
scenarios = [
  {name = "rate", workers = 2, slots = 8, load = "rate:10/s:for:5s", job_seconds = 0.5},
  {name = "deep", workers = 2, slots = 8, burst = 64, job_seconds = 0.5},
]
"""


def test_a_profiles_row_is_judged_on_its_steady_state_latency(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "jobbench.toml").write_text(STEADY_SUITE)
    args = ("main", "pr", "--suite", "steady", "--target", "sim", "--quiet")
    assert run_cli(monkeypatch, "compare", *args, "--format", "json", cwd=tmp_path) == EXIT_OK
    comparison = json.loads((tmp_path / "reports" / "main-vs-pr.json").read_text())
    rate, deep = comparison["rows"]
    assert rate["metric"] == "steady_e2e_p99_s" and deep["metric"] == "time_to_p99_s"
    steady = rate["metrics"]["steady_e2e_p99_s"]
    assert steady["baseline"]["median"] == pytest.approx(0.55)  # a wake and a job: it keeps up
    assert "steady_e2e_p99_s" not in deep["metrics"]  # a burst has no steady state
    assert run_cli(monkeypatch, "gate", *args, "--reps", "3", cwd=tmp_path) == EXIT_OK
    md = run_cli(monkeypatch, "compare", *args, "--format", "markdown", cwd=tmp_path)
    page = tmp_path / "page.html"
    html = run_cli(monkeypatch, "report", "main-vs-pr", "--html", str(page), cwd=tmp_path)
    assert md == EXIT_OK and html == EXIT_OK and "steady e2e p99" in page.read_text()


def test_the_builtin_steady_suite_shows_where_take_ahead_engages(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The reference fleet at 25, 50 and 90 % of its capacity (84 jobs/s): no take comes back
    # full, so take-ahead never engages and both sides are the same jobs to the nanosecond;
    # periodic bursts deeper than the fleet's 128 slots: takes come back full, take-ahead
    # overlaps the next take with the batch and its steady p99 is the ideal's.
    args = ("main", "pr", "--suite", "steady", "--target", "sim", "--reps", "1", "--quiet")
    assert run_cli(monkeypatch, "compare", *args, "--format", "json", cwd=tmp_path) == EXIT_OK
    comparison = json.loads((tmp_path / "reports" / "main-vs-pr.json").read_text())
    rows = {row["scenario"]: row for row in comparison["rows"]}
    assert list(rows) == [
        "4w-25pct-poisson-21jps",
        "4w-50pct-poisson-42jps",
        "4w-90pct-poisson-76jps",
        "4w-bursts-192-every-2s",
    ]
    for name, row in rows.items():
        steady = row["metrics"]["steady_e2e_p99_s"]
        base, cand = steady["baseline"]["median"], steady["candidate"]["median"]
        if "poisson" in name:
            assert base == cand and base > 0.55  # a take's 0.5 s is in every job
        else:
            assert base == pytest.approx(1.55) and cand == pytest.approx(1.05)
    pr = json.loads((tmp_path / "reports" / "pr.json").read_text())
    for entry in pr["scenarios"]:
        steady = entry["reps"][0]["steady"]
        assert steady["ideal_e2e_p99_s"] is not None and not steady["saturated"]
        assert len(steady["windows"][0]["busy_slots"]) == 4
    page = tmp_path / "page.html"
    assert run_cli(monkeypatch, "report", "main-vs-pr", "--html", str(page), cwd=tmp_path) == 0
    text = page.read_text()
    for title in ("Latency over time", "Queue depth and held jobs over time", "Spread across"):
        assert text.count(f">{title}") == len(rows)


def test_the_builtin_autoscale_suite_answers_the_take_ahead_question_with_figures(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Simulated (the same queue, scaler and policies as the fake target): take-ahead is faster
    and cheaper on deep loads, and slower on a shallow burst of long jobs, where its buffer
    holds half the burst out of the queue the scaler watches (docs/fleet.md)."""
    args = ("main", "pr", "--suite", "autoscale", "--target", "sim", "--reps", "1", "--quiet")
    code = run_cli(monkeypatch, "compare", *args, "--format", "json", cwd=tmp_path)
    assert code == EXIT_OK
    comparison = json.loads((tmp_path / "reports" / "main-vs-pr.json").read_text())
    rows = {row["scenario"]: row for row in comparison["rows"]}
    assert len(rows) == 6 and all("fleet_worker_s" in r["metrics"] for r in rows.values())
    for name in ("qd4-burst-1024", "rc256-burst-1024"):
        gated = rows[name]["metrics"]["time_to_p99_s"]
        cost = rows[name]["metrics"]["fleet_worker_s"]
        assert gated["candidate"]["median"] < gated["baseline"]["median"]
        assert cost["candidate"]["median"] < cost["baseline"]["median"]
    hurt = rows["qd2-64j-8s"]["metrics"]
    assert (
        hurt["time_to_p99_s"]["candidate"]["median"] > hurt["time_to_p99_s"]["baseline"]["median"]
    )
    pr = {
        e["name"]: e
        for e in json.loads((tmp_path / "reports" / "pr.json").read_text())["scenarios"]
    }
    shallow = pr["qd2-64j-8s"]["reps"][0]
    assert shallow["fleet"]["cold_starts"] == 0 and shallow["fleet"]["hidden_max"] == 32
    thrash = pr["rc32-64j-8s"]["reps"][0]  # added workers idle while w0's buffer holds 32
    assert thrash["fleet"]["cold_starts"] >= 1 and thrash["held"]["jobs"] == 32
    page = tmp_path / "page.html"
    assert run_cli(monkeypatch, "report", "main-vs-pr", "--html", str(page), cwd=tmp_path) == 0
    text = page.read_text()
    assert text.count(">Fleet</h4>") == len(rows) and "worker-seconds" in text
    table = run_cli(monkeypatch, "compare", *args, cwd=tmp_path)
    assert table == EXIT_OK
