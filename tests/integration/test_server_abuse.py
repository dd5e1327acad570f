"""The fake queue sheds abuse: slowloris and idle connections are closed, a long-poll is not,
connections over the cap get a clear 503, and a client's malformed bytes leave one log line,
never a traceback. Real servers on loopback port 0, raw sockets; timeouts scaled down."""

from __future__ import annotations

import json
import logging
import re
import select
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import fake_queue.http.server
from fake_queue.command import ready_banner
from fake_queue.http.server import SPARE_FILES, RunningServer, StampingServer, fit_open_file_limit
from fake_queue.options import SERVE_HELP, ServeOptions, flag
from fake_queue.settings import (
    ServerSettings,
    SettingsError,
    load_settings_file,
    settings_from_mapping,
    settings_from_options,
)

HEALTH = b"GET /v2/local/health HTTP/1.1\r\nHost: q\r\n\r\n"


def connect(server: RunningServer) -> socket.socket:
    return socket.create_connection((server.settings.host, server.settings.port), timeout=5)


def read_until_closed(sock: socket.socket, within_s: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and the seconds that took."""
    started = time.monotonic()
    data = b""
    while chunk := recv(sock, started + within_s - time.monotonic()):
        data += chunk
    return data, time.monotonic() - started


def recv(sock: socket.socket, timeout_s: float) -> bytes:
    assert timeout_s > 0, "the server did not close the connection in time"
    sock.settimeout(timeout_s)
    return sock.recv(65536)


def answer(data: bytes) -> tuple[int, Any]:
    """Status and JSON body of the one response in `data`."""
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body) if body else None


def read_answer(sock: socket.socket, data: bytes = b"") -> tuple[int, Any, bytes]:
    """One whole JSON answer, read after `data` (read before): status, body, the bytes after."""
    while True:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = re.search(rb"Content-Length: (\d+)", head)
        if length and len(rest) >= int(length[1]):
            size = int(length[1])
            return int(head.split()[1]), json.loads(rest[:size]), rest[size:]
        data += recv(sock, 5)


def ask(sock: socket.socket, request: bytes = HEALTH) -> int:
    """Send a request on a kept-alive connection: the status of its answer."""
    sock.sendall(request)
    return read_answer(sock)[0]


# ---- timeouts -------------------------------------------------------------------------------


def test_a_slowloris_connection_is_closed_within_the_header_timeout(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(header_timeout=0.5)
    with connect(server) as sock:
        started = time.monotonic()
        for byte in HEALTH[:-2]:  # never the last CRLF: the headers are never complete
            sock.sendall(bytes([byte]))
            if select.select([sock], [], [], 0.05)[0]:
                break
        data, _ = read_until_closed(sock, 2.0)
        elapsed = time.monotonic() - started
    assert 0.45 <= elapsed < 1.5, elapsed
    status, body = answer(data)
    assert status == 408 and "--header-timeout" in body["error"]


def test_headers_are_due_from_a_requests_first_byte_not_from_the_last_answer(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(header_timeout=0.3, idle_timeout=5)
    with connect(server) as sock:
        assert ask(sock) == 200
        time.sleep(0.5)  # idle longer than the header timeout: kept alive
        assert ask(sock) == 200
        sock.sendall(HEALTH[:10])  # then a request that stops half-way is cut
        data, elapsed = read_until_closed(sock, 2.0)
    assert answer(data)[0] == 408 and elapsed < 1.0


def test_an_idle_keep_alive_connection_is_closed_after_the_idle_timeout(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(header_timeout=5, idle_timeout=0.5)
    with connect(server) as sock:
        assert ask(sock) == 200
        data, elapsed = read_until_closed(sock, 2.0)
    assert data == b"" and 0.45 <= elapsed < 1.5, elapsed  # closed quietly, as HTTP allows


def test_long_polls_held_longer_than_both_timeouts_are_not_cut(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(hold=1.5, header_timeout=0.5, idle_timeout=0.5)
    polls = [b"job-take/w1?gpu=cpu", b"job-stop/w1?gpu=cpu"]
    socks = [connect(server) for _ in polls]
    started = time.monotonic()
    for sock, path in zip(socks, polls):
        sock.sendall(b"GET /v2/local/%s HTTP/1.1\r\nHost: q\r\n\r\n" % path)
    for sock in socks:
        head = recv(sock, 3.0)
        assert head.startswith(b"HTTP/1.1 204"), head
        assert time.monotonic() - started >= 1.4  # answered after the hold, not cut before
        sock.close()


# ---- the connection cap ---------------------------------------------------------------------


def test_connections_over_the_cap_get_a_503_naming_the_flag_then_a_close(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(max_connections=2)
    first, second = connect(server), connect(server)
    assert ask(first) == ask(second) == 200
    with connect(server) as third:
        third.sendall(HEALTH)
        data, _ = read_until_closed(third, 2.0)
    status, body = answer(data)
    assert status == 503 and "cap of 2 open connections (--max-connections)" in body["error"]
    assert b"Retry-After: 1" in data
    first.close()  # a slot frees: the next connection is served
    deadline = time.monotonic() + 2
    while True:
        with connect(server) as fourth:
            if ask(fourth) == 200:
                break
        assert time.monotonic() < deadline, "a freed slot was never reused"
    second.close()


def test_the_open_file_limit_is_raised_for_the_cap_or_the_cap_lowered_to_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limits = {"soft": 1024, "hard": 5000}
    resource = fake_queue.http.server.resource
    monkeypatch.setattr(resource, "getrlimit", lambda _: (limits["soft"], limits["hard"]))
    monkeypatch.setattr(resource, "setrlimit", lambda _, new: limits.update(soft=new[0]))

    assert fit_open_file_limit(ServerSettings(max_connections=4000)).max_connections == 4000
    assert limits["soft"] == 4000 + SPARE_FILES
    lowered = fit_open_file_limit(ServerSettings(max_connections=10_000))
    assert limits["soft"] == 5000 and lowered.max_connections == 5000 - SPARE_FILES


# ---- client mistakes ------------------------------------------------------------------------

CHUNKED = b"POST /v2/local/run HTTP/1.1\r\nHost: q\r\nTransfer-Encoding: chunked\r\n\r\n"
POST_RUN = b"POST /v2/local/run HTTP/1.1\r\nHost: q\r\n"
GARBAGE = {
    "TLS on the HTTP port": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
    "no HTTP version": b"GET\r\n\r\n",
    "a bad method after a good request": HEALTH + b"FOO BAR BAZ\r\n\r\n",
    "a header without a colon": b"GET /v2/local/health HTTP/1.1\r\nHost q\r\n\r\n",
    "a header line too long": b"GET / HTTP/1.1\r\nX: " + b"a" * 20_000 + b"\r\n\r\n",
    "too many headers": b"GET / HTTP/1.1\r\n" + b"X: 1\r\n" * 300 + b"\r\n",
    "a bad Content-Length": POST_RUN + b"Content-Length: abc\r\n\r\n",
    "a bad chunk size": CHUNKED + b"zz\r\nhello\r\n0\r\n\r\n",
    "a body that is not gzip": POST_RUN
    + b"Content-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello",
    "an oversized declared body": POST_RUN + b"Content-Length: 999999999\r\n\r\n{}",
    "NUL bytes": b"\x00" * 100,
}
CUT_SHORT = {  # the client goes away mid-request
    "headers": HEALTH[:20],
    "a chunk": CHUNKED + b"10\r\nhel",
    "a body": POST_RUN + b'Content-Length: 100\r\n\r\n{"in',
}


def test_client_mistakes_leave_at_most_a_log_line_each_and_no_traceback(
    start_server: Callable[..., RunningServer], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server = start_server()
    for name, request in GARBAGE.items():
        with connect(server) as sock:
            sock.sendall(request)
            status, body, rest = read_answer(sock)
            while status < 400:  # the good request before the bad one
                status, body, rest = read_answer(sock, rest)
        assert 400 <= status < 500 and body["error"], name
    for request in CUT_SHORT.values():
        with connect(server) as sock:
            sock.sendall(request)
    counting = server.runner.server
    assert isinstance(counting, StampingServer)
    deadline = time.monotonic() + 2
    while counting.open_connections:  # until the server has seen every client go
        assert time.monotonic() < deadline, counting.open_connections
        time.sleep(0.01)
    with connect(server) as sock:
        assert ask(sock) == 200
    assert "Traceback" not in caplog.text
    assert all("\n" not in record.getMessage() for record in caplog.records)
    assert len(caplog.records) <= len(GARBAGE), caplog.text


# ---- settings and the ready banner -----------------------------------------------------------


def test_the_ready_banner_names_the_faults_the_timeouts_and_the_cap(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server(
        faults=["job-done:500:0.1", "ping:drop:1"], header_timeout=2.5, max_connections=99
    )
    lines = ready_banner(server).splitlines()
    assert "faults: job-done:500:0.1, ping:drop:1" in lines
    assert "connections: up to 99 open, headers within 2.5 s, closed after 60 s idle" in lines
    assert "faults: none" in ready_banner(start_server()).splitlines()


def test_timeouts_and_cap_come_from_flags_or_toml_and_bad_ones_name_the_flag(
    tmp_path: Path,
) -> None:
    config = tmp_path / "queue.toml"
    config.write_text("[server]\nheader_timeout = 3\nidle_timeout = 90.5\nmax_connections = 50\n")
    from_file = settings_from_mapping(load_settings_file(config))
    assert (from_file.header_timeout, from_file.idle_timeout, from_file.max_connections) == (
        3,
        90.5,
        50,
    )
    flags = ServeOptions(config=config, idle_timeout=5.0, max_connections=7)
    settings = settings_from_options(flags)
    assert (settings.header_timeout, settings.idle_timeout, settings.max_connections) == (3, 5, 7)
    for options, needle in [
        (ServeOptions(header_timeout=0), "--header-timeout 0: use seconds > 0"),
        (ServeOptions(idle_timeout=-1), "--idle-timeout -1: use seconds > 0"),
        (ServeOptions(max_connections=0), "--max-connections 0: use 1 or more"),
    ]:
        with pytest.raises(SettingsError, match=needle):
            settings_from_options(options)
    config.write_text('idle_timeout = "long"\n')
    with pytest.raises(SettingsError, match="idle_timeout = 'long': use seconds"):
        settings_from_options(ServeOptions(config=config))
    default = ServerSettings()
    for name in ("header_timeout", "idle_timeout", "max_connections"):
        assert SERVE_HELP[flag(name)].endswith(f"(default {getattr(default, name):g})"), name
