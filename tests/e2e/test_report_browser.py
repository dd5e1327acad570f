"""The HTML report in a real browser: headless Chromium loads it from disk (file://), logs no
console message (the page has no scripts, so any message is an error or a blocked fetch), and
draws a picture that is not blank, in light and in dark mode.

Needs /usr/bin/chromium (Debian: `apt-get install -y chromium`); without it this test fails.
"""

from __future__ import annotations

import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import pytest

from tests.e2e.helpers import run_jobbench

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]
RUN = [
    "run", "--worker", "model", "--workers", "2", "--slots", "4", "--burst", "32",
    "--job-seconds", "0.02", "--take-latency", "0.02", "--wake-latency", "0.005",
    "--hold", "2", "--reps", "2", "--out", "reports",
]  # fmt: skip
pytestmark = pytest.mark.e2e


def jobbench(*args: str, cwd: Path) -> None:
    done = run_jobbench(*args, cwd=cwd, timeout_s=180)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A comparison report of two real runs (drain vs take-ahead): every kind of plot."""
    folder = tmp_path_factory.mktemp("browser")
    jobbench(*RUN, "--policy", "drain", "--label", "main", cwd=folder)
    jobbench(*RUN, "--policy", "take-ahead", "--take-ahead", "4", "--label", "pr", cwd=folder)
    jobbench("compare", "main", "pr", "--html", "report.html", cwd=folder)
    return folder / "report.html"


def screenshot(url: str, png: Path, *extra: str) -> str:
    """Load `url`, save a 1200 x 1600 screenshot, return Chromium's log (stderr)."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium`")
    profile = png.with_suffix(".profile")
    where = [f"--user-data-dir={profile}", f"--screenshot={png}", "--window-size=1200,1600"]
    done = subprocess.run(
        [str(CHROMIUM), *FLAGS, *extra, *where, url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert png.is_file(), f"chromium wrote no screenshot (exit {done.returncode}): {done.stderr}"
    return done.stderr


def console_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def png_rows(path: Path, rows: int) -> tuple[int, list[bytes]]:
    """The first `rows` pixel rows of an 8-bit RGB(A) PNG, unfiltered (no imaging library)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, idat, width, channels = 8, b"", 0, 0
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + size]
        if kind == b"IHDR":
            width, _, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), f"unexpected PNG format {depth}/{colour}"
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + size
    stride, raw = width * channels, zlib.decompressobj().decompress(idat)
    out, previous = [], bytearray(stride)
    for y in range(min(rows, len(raw) // (stride + 1))):
        start = y * (stride + 1)
        line = bytearray(raw[start + 1 : start + 1 + stride])
        line = _unfilter(raw[start], line, previous, channels)
        out.append(bytes(line))
        previous = line
    return channels, out


def _unfilter(kind: int, line: bytearray, up: bytearray, bpp: int) -> bytearray:
    for x in range(len(line)) if kind else ():
        a = line[x - bpp] if x >= bpp else 0
        b, c = up[x], (up[x - bpp] if x >= bpp else 0)
        if kind == 1:
            line[x] = (line[x] + a) & 255
        elif kind == 2:
            line[x] = (line[x] + b) & 255
        elif kind == 3:
            line[x] = (line[x] + (a + b) // 2) & 255
        else:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    return line


def pixels(path: Path, rows: int = 900) -> Counter[tuple[int, ...]]:
    """RGB counts of every other pixel of the top `rows` rows."""
    channels, lines = png_rows(path, rows)
    return Counter(
        tuple(line[i : i + 3]) for line in lines for i in range(0, len(line), channels * 2)
    )


def test_the_console_scan_sees_errors(tmp_path: Path) -> None:
    """Proof the check below can fail: a page with a script error logs to the console."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><p>x</p><script>throw new Error("boom")</script>')
    log = screenshot(bad.as_uri(), tmp_path / "bad.png")
    assert any("boom" in line for line in console_lines(log)), log


def test_chromium_renders_the_report_with_no_console_errors(page: Path, tmp_path: Path) -> None:
    log = screenshot(page.as_uri(), tmp_path / "light.png")
    assert console_lines(log) == [], "\n".join(console_lines(log))
    seen = pixels(tmp_path / "light.png")
    (background, count), *_ = seen.most_common(1)
    assert sum(background) > 600, f"light mode background is {background}"
    assert len(seen) >= 50, f"only {len(seen)} distinct colours: a blank page?"
    ink = 1 - count / seen.total()
    assert ink > 0.03, f"only {ink:.1%} of the page differs from the background"


def test_chromium_in_dark_mode_draws_on_a_dark_background(page: Path, tmp_path: Path) -> None:
    log = screenshot(page.as_uri(), tmp_path / "dark.png", "--force-dark-mode")
    assert console_lines(log) == [], "\n".join(console_lines(log))
    seen = pixels(tmp_path / "dark.png")
    (background, _), *_ = seen.most_common(1)
    assert sum(background) < 150, f"dark mode background is {background}"
    assert len(seen) >= 50, f"only {len(seen)} distinct colours: a blank page?"
