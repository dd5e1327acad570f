"""Bad input is exit 2 and one line naming the flag (or the TOML field and file) and the fix,
before anything starts: the bounds on sizes (docs/reliability.md, "Bounds on input"), the
messages that used to mislead, and the same checks on suites and variants. In this process
(nothing may start: tests/unit/conftest.py); benchmarks/bad_inputs.py runs the whole campaign
as real processes."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from fake_queue.queue.latency import MAX_LATENCY_S
from jobbench.clients.endpoint import Endpoint
from jobbench.clients.live_http import Answer, LiveHttp
from jobbench.core.scenario import checks
from jobbench.errors import EXIT_USAGE, JobbenchError, RunFailed, UsageError
from tests.unit.cli import run_cli

MODEL = ["run", "--worker", "model", "--workers", "1", "--burst", "4", "--reps", "1"]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err  # one line, no traceback
    return err.strip()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--workers", "100000"], "--workers 100000: at most 1,024 ("),
        (["--slots", "10000000"], "--slots 10000000: at most 4,096 ("),
        (["--burst", "100000000"], "--burst 100000000: at most 1,000,000 ("),
        (["--policy", "take-ahead", "--take-ahead", "5000"], "--take-ahead 5000: at most 4,096"),
        (["--reps", "100000"], "--reps 100000: at most 1,000 ("),
        (["--job-seconds", "1e9"], "--job-seconds 1e+09: at most 3600 s ("),
        (["--job-seconds", "nan"], "--job-seconds nan: use a number of seconds >= 0"),
        (["--workers", "0"], "--workers 0: must be a whole number >= 1"),
    ],
)
def test_sizes_beyond_the_bounds_are_refused_naming_the_flag_and_the_fix(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    said: str,
) -> None:
    assert run_cli(monkeypatch, *MODEL, *args, cwd=tmp_path) == EXIT_USAGE
    err = one_error_line(capsys)
    assert said in err
    flag = said.split(" ")[0]
    assert f"use {flag} " in err or "seconds >= 0" in err or ">= 1" in err  # the fix
    assert not list(tmp_path.iterdir())  # nothing ran, nothing was written


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--max-fail-ratio", "1.5"], "--max-fail-ratio 1.5: use a fraction like 0.01"),
        (["--target", "live"], "--target 'live': use fake or sim (a live endpoint is --endpoint"),
        (["--format", "xml"], "--format xml: use one of table, json, bmf, github-action-benchmark"),
        (["--label", "a/b"], "--label 'a/b': use a plain file name like main or pr-123"),
        (["--reps", "0"], "--reps 0: must be a whole number >= 1"),
    ],
)
def test_a_value_one_flag_checks_alone_is_refused_as_it_is_read(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    line: str,
) -> None:
    assert run_cli(monkeypatch, *MODEL, *args, cwd=tmp_path) == EXIT_USAGE
    assert one_error_line(capsys).startswith(f"error: {line}")
    assert not list(tmp_path.iterdir())  # nothing ran, nothing was written


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["compare", "a", "b", "--format", "xml"], "--format xml: use one of table, markdown,"),
        (["gate", "a", "b", "--target", "live"], "--target 'live': use fake or sim"),
        (["gate", "a", "b", "--budget", "soon"], "--budget 'soon': write a duration like 30m"),
        (["trend", "a..b", "--format", "csv"], "--format csv: use one of table, json, bmf,"),
        (["sweep", "--processes", "0"], "--processes 0: use 1 or more (default: one per CPU)"),
        (["sweep", "--label", ".x"], "--label '.x': use a plain file name like main or pr-123"),
    ],
)
def test_each_command_refuses_such_a_value_in_the_same_words(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    line: str,
) -> None:
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == EXIT_USAGE
    assert one_error_line(capsys).startswith(f"error: {line}")
    assert not list(tmp_path.iterdir())


def test_a_fleet_that_does_not_fit_in_memory_says_how_many_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(checks, "mem_available", lambda: 2 << 30)  # a 2 GB machine
    args = [*MODEL, "--workers", "100", "--burst", "1000"]
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == EXIT_USAGE
    fit = (2 << 30) - checks.BASE_BYTES - 1000 * checks.BYTES_PER_JOB
    fit //= checks.WORKER_BYTES["model"]
    err = one_error_line(capsys)
    assert "--workers 100: 100 model workers (~40 MB each)" in err
    assert f"use --workers {fit} or less" in err
    with pytest.raises(UsageError, match=r"--burst 1000000: the queue holds every job"):
        checks.check_memory(1, "model", 1_000_000)
    monkeypatch.setattr(checks, "mem_available", lambda: None)  # no /proc/meminfo: no check
    checks.check_memory(1000, "runpod", 1_000_000)


WHOLE, SECONDS = "write a whole number, e.g.", "write a number of seconds, e.g."


@pytest.mark.parametrize(
    ("args", "line"),
    [
        ([*MODEL, "--burst", "1e3"], f"--burst 1e3: {WHOLE} 1000"),
        ([*MODEL, "-b", "2.5"], f"--burst 2.5: {WHOLE} 2"),
        ([*MODEL, "--workers", ""], f"--workers '': {WHOLE} 4"),
        ([*MODEL, "--seed", "abc"], f"--seed abc: {WHOLE} 7"),
        ([*MODEL, "--job-seconds", "abc"], f"--job-seconds abc: {SECONDS} 0.5"),
        ([*MODEL, "--stall-after", "soon"], f"--stall-after soon: {SECONDS} 10"),
        (["gate", "a", "b", "--max-reps", "1e2"], f"--max-reps 1e2: {WHOLE} 100"),
        (["report", "x", "--html", "r.html", "--rep", "last"], f"--rep last: {WHOLE} 1"),
        (["locust", "--spawn-rate", "fast"], "--spawn-rate fast: write a number, e.g. 10"),
        (["locust", "-u", "ten"], f"--users ten: {WHOLE} 10"),
        (["serve", "--port", "8e3"], f"--port 8e3: {WHOLE} 8000"),
    ],
)
def test_a_number_that_is_not_one_says_what_to_write_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    line: str,
) -> None:
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == EXIT_USAGE
    assert one_error_line(capsys) == f"error: {line}"  # jobbench's words, not pydantic's
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--hold", "-1"], "--hold: -1 is negative; give a number of seconds >= 0"),
        (["--hold", "0"], "--hold: must be > 0 seconds"),
        (["--take-latency", "uniform:0.6,0.4"], "LOW > HIGH; write uniform:0.4,0.6"),
        (["--wake-latency", "normal:0.5,-1"], "normal:0.5,-1 has a SD < 0; write normal:0.5,1"),
        (["--take-latency", "lognormal:50,1"], "has a mean of 8.55e+21 s; keep it at most 3600"),
        (["--take-latency", "gamma:1,2"], "unknown distribution 'gamma' in 'gamma:1,2'"),
        (
            ["--done-latency", "uniform:1"],
            "--done-latency: cannot read uniform:1; write uniform:A,B",
        ),
        (["--take-latency", "1e9"], "--take-latency: 1e+09 is over an hour"),
    ],
)
def test_a_latency_message_says_what_is_wrong_and_names_the_real_flag(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    said: str,
) -> None:
    assert run_cli(monkeypatch, *MODEL, *args, cwd=tmp_path) == EXIT_USAGE
    err = one_error_line(capsys)
    assert said in err and "-latency-latency" not in err and "--hold-latency" not in err
    assert err.startswith(f"error: {args[0]}:")


def fatal(api_key: str | None, status: int) -> JobbenchError:
    async def answer() -> JobbenchError:  # an aiohttp session belongs to a running loop
        http = LiveHttp(Endpoint("http://127.0.0.1:9/v2/x", api_key))
        try:
            return http.fatal(Answer(status, "unauthorized", 0, 0), "/health")
        finally:
            await http.close()

    return asyncio.run(answer())


def test_a_live_endpoint_that_wants_a_key_says_none_was_given_and_how_to_give_it() -> None:
    none = fatal(None, 401)
    assert isinstance(none, UsageError) and "no API key was given" in str(none)
    assert "--api-key KEY or set RUNPOD_API_KEY" in str(none)
    wrong = fatal("wrong-key", 401)
    assert isinstance(wrong, RunFailed) and "the API key was refused" in str(wrong)


ROW = {"name": '"a"', "workers": "1", "slots": "4", "burst": "8", "job_seconds": "0.05"}


def write_toml(folder: Path, suite: str = "", row: str = "", variant: str = "") -> None:
    """Suite s of one scenario row (`row` = "key = value" overrides one field) and variant v,
    a model worker."""
    fields = dict(ROW)
    if row:
        key, value = row.split(" = ")
        fields[key] = value
    inner = ", ".join(f"{key} = {value}" for key, value in fields.items())
    text = f'[suites.s]\n{suite}\nscenarios = [{{{inner}}}]\n\n[variants.v]\nworker = "model"\n'
    (folder / "jobbench.toml").write_text(text + variant + "\n")


@pytest.mark.parametrize(
    ("suite", "row", "variant", "said"),
    [
        ("", "workers = 100000", "", "suites.s: scenario a: workers = 100000: at most 1,024"),
        ("", "slots = 1e4", "", "suites.s: scenario a: slots = 10000: at most 4,096"),
        ("", "burst = 100000000", "", "scenario a: burst = 100000000: at most 1,000,000"),
        ("", "job_seconds = inf", "", "scenario a: job_seconds = inf: use a number of seconds"),
        ("reps = 5000", "", "", "suites.s: reps = 5000: at most 1,000 ("),
        ("latency = {hold = 0}", "", "", "suites.s: hold: must be > 0 seconds"),
        ("", "", 'policy = "fast"', "variants.v: policy = 'fast': use one of"),
        ("", "", "take_ahead = -1", "variants.v: take_ahead = -1: must be a whole number >= 0"),
        (
            "",
            "",
            'policy = "take-ahead"\ntake_ahead = 9000',
            "variants.v: take_ahead = 9000: at most 4,096 (",
        ),
        ("", "", 'policy = "take-ahead"', "policy = take-ahead needs take_ahead = K (K > 0)"),
    ],
)
def test_a_bad_suite_or_variant_names_the_file_and_the_toml_field(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    suite: str,
    row: str,
    variant: str,
    said: str,
) -> None:
    write_toml(tmp_path, suite, row, variant)
    assert run_cli(monkeypatch, "gate", "main", "v", "--suite", "s", cwd=tmp_path) == EXIT_USAGE
    err = one_error_line(capsys)
    assert err.startswith("error: jobbench.toml ") and said in err
    assert not re.search(r"--[a-z]", err.split(":", 2)[2]), err  # a field, never a flag


def test_a_suite_too_big_for_this_machine_is_refused_with_the_variant_s_workers(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(checks, "mem_available", lambda: 4 << 30)
    write_toml(tmp_path, row="workers = 200")
    assert run_cli(monkeypatch, "gate", "main", "v", "--suite", "s", cwd=tmp_path) == EXIT_USAGE
    err = one_error_line(capsys)
    assert "suites.s: scenario a: workers = 200: 200 model workers (~40 MB each)" in err
    assert re.search(r"use workers = \d+ or less", err), err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--run-time", "soon"], "--run-time 'soon': write e.g. 30s"),
        (["--users", "0"], "--users 0: must be a whole number >= 1"),
        (["--spawn-rate", "nan"], "--spawn-rate nan"),
        (["--payload-bytes", "1000000000"], "--payload-bytes 1000000000: at most"),
    ],
)
def test_locust_flags_are_checked_before_the_queue_and_workers_start(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    said: str,
) -> None:
    argv = ["locust", "--headless", "--worker", "model", "--workers", "1", *args]
    assert run_cli(monkeypatch, *argv, cwd=tmp_path) == EXIT_USAGE
    assert said in one_error_line(capsys)


def documented_bounds() -> dict[str, tuple[str, str]]:
    """The table of docs/reliability.md, "Bounds on input": flag -> (least, most)."""
    section = DOCS.read_text().split("## Bounds on input", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(--[a-z-]+)`[^|]*\| ([^|]+) \| ([^|]+) \|", section, re.M)
    return {flag: (least.strip(), most.strip()) for flag, least, most in rows}


def test_the_documented_bounds_are_the_checked_ones() -> None:
    from fake_queue.http.app import MAX_BURST

    documented = documented_bounds()
    for bound in checks.BOUNDS:
        least, most = documented[bound.flag]
        assert float(least) == bound.least, bound.flag
        assert float(most.replace(",", "").split()[0]) == bound.most, bound.flag
    assert checks.BURST.most == MAX_BURST  # the queue's own limit on a burst
    assert float(documented["--take-latency"][1].split()[0]) == MAX_LATENCY_S


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("python nothere.py --flag", "nothere.py: no such file in"),
        ("./run_worker.sh", "./run_worker.sh: no such program here or on PATH"),
        ("no-such-program-xyz handler.py", "no-such-program-xyz: no such program"),
    ],
)
def test_a_worker_command_whose_program_or_script_is_missing_is_refused_before_it_starts(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    said: str,
) -> None:
    """Found where it was typed, in one line, not as workers dying in their own folders."""
    code = run_cli(monkeypatch, "run", "--worker", command, "--slots", "1", cwd=tmp_path)
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and err.count("\n") == 1 and said in err, err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_worker_command_with_its_script_present_passes_the_check(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from jobbench.core.scenario.worker import check_command_files

    (tmp_path / "handler.py").write_text("")
    monkeypatch.chdir(tmp_path)
    check_command_files("python -u handler.py --x 1")  # no error
    check_command_files("python -m my_package.worker")  # a module: not a file to look for
    with pytest.raises(UsageError, match=r"other\.py"):
        check_command_files("python other.py")
