"""`jobbench serve` / `python -m fake_queue` as a user starts them: banner, config, shutdown;
and the one parser both share (fake_queue.options): same flags, same help, same one-line
errors, same settings."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

import jobbench.commands.serve
from fake_queue.command import ready_banner
from fake_queue.http.server import RunningServer
from fake_queue.options import SERVE_FLAGS, SERVE_HELP, ServeOptions, parse_options
from fake_queue.queue.faults import parse_fault
from fake_queue.queue.latency import Distribution, parse_distribution
from fake_queue.settings import (
    ServerSettings,
    SettingsError,
    load_settings_file,
    settings_from_mapping,
    settings_from_options,
)
from tests.unit.cli import run_cli


def start(*args: str, cwd: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "jobbench", "serve", "--port", "0", *args],
        cwd=cwd,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "CI": "true"},
    )
    assert proc.stdout is not None
    lines = [proc.stdout.readline() for _ in range(9)]
    return proc, "".join(lines)


def test_serve_prints_url_and_worker_env_applies_config_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    config = tmp_path / "queue.toml"
    config.write_text(
        '[server]\nendpoint_id = "bench"\nhold = 30\n'
        'latency = {take = "uniform:0.01,0.02"}\nfaults = ["ping:503:1"]\n'
    )
    proc, banner = start("--config", str(config), "--wake-latency", "0.01", cwd=tmp_path)
    try:
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+) \(endpoint (\S+)\)", banner)
        assert match, banner
        base, endpoint = match.groups()
        assert endpoint == f"{base}/v2/bench"
        assert "take uniform:0.01,0.02 s, wake 0.01 s, hold 30 s" in banner
        assert f"RUNPOD_WEBHOOK_GET_JOB={endpoint}/job-take/$ID?gpu=cpu" in banner
        assert (
            f"RUNPOD_WEBHOOK_POST_OUTPUT={endpoint}/job-done/$RUNPOD_POD_ID/$ID?gpu=cpu" in banner
        )
        assert httpx.get(f"{endpoint}/health").status_code == 200
        assert httpx.get(f"{endpoint}/ping/w1").status_code == 503  # the configured fault
        assert httpx.get(f"{base}/v2/local/health").status_code == 404  # other endpoint ids
        # an open long-poll must not hold up shutdown: the server exits well within the 30 s
        # hold (the wait's timeout), closing the poll unanswered after its shutdown grace
        ended: list[object] = []

        def long_poll() -> None:
            try:
                ended.append(httpx.get(f"{endpoint}/job-take/w1?x=1", timeout=40).status_code)
            except httpx.TransportError as exc:
                ended.append(exc)

        poll = threading.Thread(target=long_poll)
        poll.start()
        deadline = time.monotonic() + 5
        while httpx.get(f"{base}/_bench/workers").json().get("w1", {}).get("polling", 0) < 1:
            assert time.monotonic() < deadline, "the long-poll never reached the queue"
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 130  # interrupted, as every command
        poll.join(5)
        assert len(ended) == 1 and isinstance(ended[0], httpx.RemoteProtocolError), ended
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--take-latency", "later"], "--take-latency"),
        (["--hold", "0"], "--hold"),
        (["--fault", "job-done:teapot:1"], "--fault"),
        (["--rate-limits", "some"], "--rate-limits"),
        (["--config", "missing.toml"], "--config missing.toml"),
    ],
)
def test_serve_rejects_bad_settings_with_exit_2(
    args: list[str], needle: str, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fake_queue", "--port", "0", *args],
        cwd=tmp_path,
        text=True,
        capture_output=True,
        timeout=30,
    )
    assert result.returncode == 2 and needle in result.stderr, result.stderr


def test_a_non_loopback_bind_is_warned_about_loudly() -> None:
    settings = ServerSettings(host="0.0.0.0", port=8000)
    banner = ready_banner(RunningServer(runner=None, settings=settings, queue=None))  # type: ignore[arg-type]
    assert banner.startswith("WARNING: bound to 0.0.0.0, not loopback")
    assert "no --api-key set" in banner
    quiet = ready_banner(RunningServer(None, ServerSettings(), None))  # type: ignore[arg-type]
    assert "WARNING" not in quiet


# ---- one option definition for both entry points -------------------------------------------

CONFIG = (
    '[server]\nport = 9001\nendpoint_id = "bench"\nhold = 30\nseed = 3\n'
    'latency = {take = "uniform:0.01,0.02"}\nfaults = ["ping:503:1"]\n'
)


def typer_options(monkeypatch: pytest.MonkeyPatch, args: list[str], cwd: Path) -> ServeOptions:
    """The ServeOptions `jobbench serve ARGS` hands its command (which is not run)."""
    seen: list[ServeOptions] = []

    def serve_command(options: ServeOptions) -> int:
        seen.append(options)
        return 0

    monkeypatch.setattr(jobbench.commands.serve, "serve_command", serve_command)
    assert run_cli(monkeypatch, "serve", *args, cwd=cwd) == 0
    assert len(seen) == 1
    return seen[0]


def test_both_entry_points_parse_the_same_flags_into_the_same_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "queue.toml"
    config.write_text(CONFIG)
    args = [
        "--host", "127.0.0.2", "--port", "0", "--endpoint-id", "other",
        "--take-latency", "normal:0.2,0.01", "--wake-latency", "0.01", "--hold", "3",
        "--done-latency", "0.002", "--api-key", "k", "--rate-limits", "runpod",
        "--fault", "run:429:0.1", "--fault", "job-done:drop:0.5", "--seed", "7",
        "--config", str(config), "--ready-json",
    ]  # fmt: skip
    options = parse_options(args)
    assert typer_options(monkeypatch, args, tmp_path) == options
    assert options.faults == ("run:429:0.1", "job-done:drop:0.5") and options.ready_json
    settings = settings_from_options(options)
    assert settings == ServerSettings(
        host="127.0.0.2",
        port=0,
        endpoint_id="other",
        latency=settings.latency,
        api_key="k",
        rate_limits="runpod",
        faults=tuple(map(parse_fault, ["ping:503:1", "run:429:0.1", "job-done:drop:0.5"])),
        seed=7,
    )
    assert settings.latency.take == Distribution("normal", 0.2, 0.01)
    assert (settings.latency.wake.a, settings.latency.hold.a, settings.latency.done.a) == (
        0.01,
        3.0,
        0.002,
    )
    # and no flag at all: the same defaults (ready_json off) from either parser
    assert typer_options(monkeypatch, [], tmp_path) == parse_options([]) == ServeOptions()
    assert settings_from_options(ServeOptions()) == ServerSettings()


def test_a_flag_overrides_its_config_value_and_only_that_one(tmp_path: Path) -> None:
    config = tmp_path / "queue.toml"
    config.write_text(CONFIG)
    from_file = settings_from_mapping(load_settings_file(config), ServerSettings())
    assert settings_from_options(parse_options(["--config", str(config)])) == from_file
    assert from_file.port == 9001 and from_file.latency.hold.a == 30.0  # the file was read

    settings = settings_from_options(
        parse_options(
            ["--config", str(config), "--hold", "5", "--port", "0", "--fault", "run:429:1"]
        )
    )
    assert settings.latency.hold == Distribution("fixed", 5.0)
    assert settings.port == 0  # 0 is a flag given, not a flag left out
    assert settings.latency.take == parse_distribution("uniform:0.01,0.02", "take")  # kept
    assert (settings.endpoint_id, settings.seed) == ("bench", 3)  # kept
    assert settings.faults == (parse_fault("ping:503:1"), parse_fault("run:429:1"))  # added


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (ServeOptions(take_latency="later"), "--take-latency: cannot read 'later'"),
        (ServeOptions(done_latency="uniform:2,1"), "--done-latency"),
        (ServeOptions(hold="0"), "--hold must be > 0"),
        (ServeOptions(port=70000), "--port 70000"),
        (ServeOptions(faults=("ping:503:1", "nope")), "--fault 'nope'"),
        (ServeOptions(endpoint_id="a/b"), "--endpoint-id 'a/b'"),
    ],
)
def test_a_bad_flag_is_a_settings_error_naming_it(options: ServeOptions, needle: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(needle)):
        settings_from_options(options)


def test_a_bad_config_value_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "queue.toml"
    config.write_text("port = 70000\n")
    with pytest.raises(SettingsError, match=re.escape(f"--config {config}: --port 70000")):
        settings_from_options(ServeOptions(config=config, port=8000))


def test_jobbench_serve_exits_2_with_the_settings_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(monkeypatch, "serve", "--rate-limits", "some", cwd=tmp_path) == 2
    assert capsys.readouterr().err == "error: --rate-limits 'some': use off or runpod\n"


def program(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv], cwd=cwd, text=True, capture_output=True, timeout=30
    )


def test_both_entry_points_list_the_same_flags_with_the_same_help(tmp_path: Path) -> None:
    alone = program("fake_queue", "-h", cwd=tmp_path)
    served = program("jobbench", "serve", "-h", cwd=tmp_path)
    assert alone.returncode == served.returncode == 0, alone.stderr + served.stderr
    assert alone.stdout.startswith("Usage: python -m fake_queue [OPTIONS]\n")
    assert served.stdout.startswith("Usage: python -m jobbench serve [OPTIONS]\n")
    body = alone.stdout.split("\n", 1)[1]
    assert served.stdout.split("\n", 1)[1] == body  # one parser: the rest is the same help
    listed = re.findall(r"^  (-h, --help|--[a-z-]+)( [A-Z:]+)?", body, re.M)
    assert [name for name, _ in listed] == ["-h, --help", *(f.name for f in SERVE_FLAGS)]
    for spec in SERVE_FLAGS:  # each flag with its value's name and its whole help text
        assert f"{spec.name} {spec.metavar}".strip() in body, spec.name
        assert spec.help.split()[-1] in body, spec.name
    assert "<" not in body  # no Python type (<int>, <list[str]>) anywhere


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--port", "8e3"], "--port 8e3: write a whole number, e.g. 8000"),
        (["--idle-timeout", "soon"], "--idle-timeout soon: write a number of seconds, e.g. 60"),
        (["--hots", "1.2.3.4"], "--hots: no such option; did you mean --host (or --hold"),
        (["--port"], "--port: needs a value; see `"),
        (["8000"], "8000: unexpected argument; see `"),
    ],
)
def test_both_entry_points_refuse_bad_flags_in_one_line_alike(
    tmp_path: Path, args: list[str], line: str
) -> None:
    for argv, prog in (
        (["fake_queue"], "python -m fake_queue"),
        (["jobbench", "serve"], "python -m jobbench serve"),
    ):
        result = program(*argv, *args, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith(f"error: {line}") and result.stderr.count("\n") == 1
        assert "Usage" not in result.stderr
        if "see `" in line:
            assert f"see `{prog} -h`" in result.stderr, result.stderr
    assert not list(tmp_path.iterdir())


def test_the_help_texts_quote_the_real_defaults() -> None:
    default = ServerSettings()
    quoted = {
        "--host": default.host,
        "--port": default.port,
        "--endpoint-id": default.endpoint_id,
        "--take-latency": default.latency.take.describe(),
        "--wake-latency": default.latency.wake.describe(),
        "--hold": default.latency.hold.describe(),
        "--done-latency": default.latency.done.describe(),
        "--take-extra": default.latency.take_extra,
        "--rate-limits": default.rate_limits,
    }
    for name, value in quoted.items():
        assert re.search(rf"default {re.escape(str(value))}\)$", SERVE_HELP[name]), name


def test_serve_on_a_port_in_use_says_so_and_exits_2(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "jobbench", "serve", "--port", str(port)],
            cwd=tmp_path,
            text=True,
            capture_output=True,
            timeout=30,
        )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}: "), result.stderr
    assert "choose another --port" in result.stderr
