"""CLI conventions a shell user expects: -h beside --help on every command, --version, short
flags, usage lines and help without Python types or cut text, and every usage error one line
that names the fix (a mistyped flag or command: the names most like it)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

import jobbench.commands.run
from fake_queue.options import SERVE_FLAGS, OptionsError, number, parse_options, whole_number
from jobbench import __version__
from jobbench.cli import app
from jobbench.cli.conventions import not_an_option, similar
from jobbench.workers.policies import POLICIES
from tests.unit.cli import run_cli

GROUP = typer.main.get_command(app)
assert isinstance(GROUP, typer.core.TyperGroup)
COMMANDS = list(GROUP.commands)  # every command, those added later too


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_dash_h_is_help_for_the_app_and_every_command(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
) -> None:
    args = [command, "-h"] if command else ["-h"]
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == 0
    out = capsys.readouterr().out
    usage = out.splitlines()[0]  # the program's name in-process is pytest's
    expected = f" {command} [OPTIONS]" if command else " [OPTIONS] COMMAND [ARGS]..."
    assert usage.startswith("Usage: ") and expected in usage
    assert "-h, --help" in out
    assert not any(tmp_path.iterdir())  # help starts and writes nothing


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_prints_the_package_version(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str
) -> None:
    assert run_cli(monkeypatch, flag, cwd=tmp_path) == 0
    assert capsys.readouterr().out == f"jobbench {__version__}\n"


def help_of(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp: Path, *args: str
) -> str:
    assert run_cli(monkeypatch, *args, "-h", cwd=tmp) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_names_values_not_python_types_and_cuts_nothing(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
) -> None:
    out = help_of(monkeypatch, capsys, tmp_path, *([command] if command else []))
    assert not re.search(r"<[a-z_]+(\[[^>]*\])?>", out), out  # <int>, <path>, <list[str]>
    assert "{" not in out.splitlines()[0], out  # usage: BASELINE, not {baseline}
    # "..." only where Click marks a repeatable argument: COMMAND [ARGS]..., [LOCUST_ARGS]...
    assert "..." not in re.sub(r"\]\.\.\.", "]", out), out
    options = out.split("Options:\n")[1].split("\n\n")[0]
    for flag, metavar in re.findall(r"^  ((?:-[a-zA-Z], )?--?[a-z][a-z-]*) ?(\S*)", options, re.M):
        assert metavar in ("", "/") or metavar.upper() == metavar or "|" in metavar, flag


def test_the_app_lists_each_command_with_its_whole_description(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    listing = " ".join(help_of(monkeypatch, capsys, tmp_path).split("Commands:")[1].split())
    for name, command in GROUP.commands.items():
        first = " ".join((command.help or "").split("\n\n")[0].split())
        assert f"{name} {first}" in listing, name  # wrapped, never cut with "..."


@pytest.mark.parametrize(
    ("command", "usage", "arguments"),
    [
        ("compare", "compare [OPTIONS] BASELINE CANDIDATE", ["BASELINE", "CANDIDATE"]),
        ("gate", "gate [OPTIONS] BASELINE CANDIDATE", ["BASELINE", "CANDIDATE"]),
        ("report", "report [OPTIONS] NAME", ["NAME"]),
        ("locust", "locust [OPTIONS] [LOCUST_ARGS]...", ["LOCUST_ARGS"]),
        ("sweep", "sweep [OPTIONS] [NAME]", ["NAME"]),
    ],
)
def test_usage_names_the_arguments_in_capitals(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    usage: str,
    arguments: list[str],
) -> None:
    out = help_of(monkeypatch, capsys, tmp_path, command)
    assert out.splitlines()[0].endswith(usage), out.splitlines()[0]
    section = out.split("Arguments:\n")[1].split("\n\n")[0]
    assert re.findall(r"^  (\S+)", section, re.M) == arguments, section


def opts_of(command: str) -> list[str]:
    return [
        name
        for param in GROUP.commands[command].params
        for name in (*param.opts, *getattr(param, "secondary_opts", ()))
        if param.param_type_name == "option"
    ]


@pytest.mark.parametrize("command", COMMANDS)
def test_no_flag_is_spelled_twice_within_a_command(command: str) -> None:
    opts = [*opts_of(command), "-h", "--help"]
    assert len(opts) == len(set(opts)), sorted(o for o in opts if opts.count(o) > 1)


@pytest.mark.parametrize("command", ["run", "sweep", "workers", "locust"])
def test_the_policy_help_names_every_policy_the_flag_takes(command: str) -> None:
    (policy,) = [p for p in GROUP.commands[command].params if "--policy" in p.opts]
    help_text = getattr(policy, "help", None) or ""
    assert [name for name in POLICIES if name not in help_text] == [], help_text


SHORT = {
    "-w": "--workers",
    "-s": "--slots",
    "-b": "--burst",
    "-j": "--job-seconds",
    "-t": "--take-ahead",
    "-n": "--reps",
    "-l": "--label",
    "-o": "--out",
    "-q": "--quiet",
}


@pytest.mark.parametrize(
    "command", ["run", "sweep", "compare", "gate", "workers", "report", "locust"]
)
def test_a_short_flag_means_the_same_option_in_every_command(command: str) -> None:
    own = {"-t": "--run-time"} if command == "locust" else {}  # Locust's -u, -r, -t as Locust's
    for param in GROUP.commands[command].params:
        for short in (o for o in param.opts if len(o) == 2):
            meant = own.get(short) or SHORT.get(short)
            assert meant is None or meant in param.opts, (command, param.opts)
    assert {o for o in opts_of("run") if len(o) == 2} == set(SHORT)
    assert {"-u", "-r", "-t", "-w", "-s", "-j"} <= set(opts_of("locust"))


def test_short_flags_reach_the_run_request(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[jobbench.commands.run.RunRequest] = []

    def run_command(request: jobbench.commands.run.RunRequest) -> int:
        seen.append(request)
        return 0

    monkeypatch.setattr(jobbench.commands.run, "run_command", run_command)
    args = ["-w", "2", "-s", "3", "-b", "5", "-j", "0.25", "-t", "1", "-n", "2", "-l", "short"]
    args += ["-o", "out", "-q"]
    assert run_cli(monkeypatch, "run", *args, cwd=tmp_path) == 0
    (request,) = seen
    assert (request.workers, request.slots, request.burst, request.job_seconds) == (2, 3, 5, 0.25)
    assert (request.take_ahead, request.reps, request.label) == (1, 2, "short")
    assert request.out == Path("out") and request.quiet


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err  # never Usage / Try / Error
    return re.sub(r"`[^`]*jobbench ", "`jobbench ", err.strip())  # in-process, pytest's name


def test_a_mistyped_flag_suggests_the_closest_first(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert run_cli(monkeypatch, "run", "--wokers", "4", cwd=tmp_path) == 2
    line = one_line(capsys)
    assert line.startswith("error: --wokers: no such option; did you mean --workers "), line
    assert "--no-" not in line and line.endswith("(see `jobbench run -h`)"), line
    assert run_cli(monkeypatch, "compare", "a", "b", "--max-regresion", "5%", cwd=tmp_path) == 2
    assert "no such option; did you mean --max-regression (or " in one_line(capsys)


def test_a_mistyped_command_suggests_the_closest(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert run_cli(monkeypatch, "wokers", "--server", "x", cwd=tmp_path) == 2
    assert one_line(capsys) == (
        "error: wokers: no such command; did you mean workers? (see `jobbench -h`)"
    )
    assert run_cli(monkeypatch, "frobnicate", cwd=tmp_path) == 2
    assert one_line(capsys) == "error: frobnicate: no such command; see `jobbench -h`"


def test_similarity_puts_a_negative_flag_last_unless_it_is_the_closest() -> None:
    flags = ["--workers", "--worker", "--yes", "--no-yes", "--events", "--no-events"]
    assert similar("--wokers", flags)[0] == "--workers"
    assert "--no-yes" not in similar("--yse", flags) and similar("--yse", flags)[0] == "--yes"
    assert similar("--no-event", flags)[0] == "--no-events"  # the closest: kept
    assert similar("--zzz", flags) == []


def slips(flag: str) -> set[str]:
    """A flag with one letter left out or two letters swapped."""
    word = flag[2:]
    out = {word[:i] + word[i + 1 :] for i in range(len(word))}
    out |= {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1)}
    return {"--" + slip for slip in out if slip}


def told(argv: list[str]) -> str:
    with pytest.raises(OptionsError) as caught:
        parse_options(argv)
    return str(caught.value)


def test_python_m_fake_queue_tells_a_slip_in_jobbench_s_words() -> None:
    """fake_queue/options.py cannot import jobbench's conventions, so it words a mistyped flag
    with a few lines of its own: the same words, flag by flag. A bad number is told with the
    readers jobbench's flags use too, after the flag and the text as jobbench tells it."""
    names = [*(spec.name for spec in SERVE_FLAGS), "-h", "--help"]
    help_command = "python -m fake_queue -h"
    for slip in sorted(set().union(*(slips(n) for n in names if n != "-h")) - set(names)):
        assert told([slip, "1"]) == not_an_option(slip, names, help_command), slip
    assert told(["extra words"]) == not_an_option("extra words", names, help_command)
    for spec in (s for s in SERVE_FLAGS if s.reads in ("whole", "seconds")):
        for text in ("8e3", "2.5", "abc", "", "1e300"):
            try:
                if spec.reads == "whole":
                    whole_number(text, int(spec.example))
                else:
                    number(text, "a number of seconds", float(spec.example))
            except ValueError as exc:
                assert told([spec.name, text]) == f"{spec.name} {shlex.quote(text)}: {exc}"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["compare", "main"], "missing CANDIDATE (the same kinds of name as BASELINE)"),
        (["report", "x"], "missing --html FILE (the HTML file to write)"),
        (["workers"], "missing --server URL (the fake queue's URL"),
        (["run", "--workers"], "--workers: needs a value"),
        (["run", "-w"], "-w: needs a value"),
        (["run", "--quiet=1"], "option '--quiet' does not take a value"),
        (["run", "extra"], "extra: unexpected argument"),
        (["report", "x", "--html", "r.html", "--format", "csv"], "--format: no such option"),
    ],
)
def test_every_click_usage_error_is_one_line_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    said: str,
) -> None:
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == 2
    line = one_line(capsys)
    assert line.startswith(f"error: {said}"), line
    assert f"see `jobbench {args[0]} -h`" in line, line
    assert not any(tmp_path.iterdir())


def test_no_command_prints_the_help_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert run_cli(monkeypatch, cwd=tmp_path) == 2
    err = capsys.readouterr().err
    assert err.startswith("Usage: ") and "Commands:" in err and "run " in err
