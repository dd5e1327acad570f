"""`jobbench serve` / `python -m fake_queue` as a user starts them: banner, config, shutdown."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from fake_queue.__main__ import ready_banner
from fake_queue.server import RunningServer
from fake_queue.settings import ServerSettings


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
        assert proc.wait(timeout=10) == 0
        poll.join(5)
        assert len(ended) == 1 and isinstance(ended[0], httpx.RemoteProtocolError), ended
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--take-latency", "later"], "take_latency"),
        (["--fault", "job-done:teapot:1"], "--fault"),
        (["--rate-limits", "some"], "--rate-limits"),
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
