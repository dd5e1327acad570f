"""The HTML report in a real browser: headless Chromium loads it from disk (file://), logs no
console message (the page has no scripts, so any message is an error or a blocked fetch), and
draws a picture that is not blank, in light and in dark mode. At 1,400 px, the window the
page is laid out for, nothing overflows and no label is clipped: a script measures the laid-out page
(LAYOUT_CHECK) in a copy whose policy lets it run, every rep's <details> opened.

Needs Chromium on PATH (Debian: `apt-get install -y chromium`); without it these tests are
skipped, saying so, and `.ci/run`, which installs it, fails on the skip.
"""

from __future__ import annotations

import html
import json
import re
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from jobbench.core.real_workers.rep_drive import RepEnd
from tests.e2e.helpers import run_jobbench
from tests.machine_share import MachineShare
from tests.programs import CHROMIUM, needs
from tests.unit.test_html_report import BUSY, SATURATED, STALL, small

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
pytestmark = needs(CHROMIUM)


def jobbench(*args: str, cwd: Path) -> None:
    done = run_jobbench(*args, cwd=cwd, timeout_s=180)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory, machine_share: MachineShare) -> Path:
    """A comparison report of two real runs (drain vs take-ahead): every kind of plot; beside
    it run.html, the take-ahead run's own page (close to its ideal: the ideal's label sits at
    the completion plot's right edge)."""
    with machine_share.shared():
        return _page(tmp_path_factory.mktemp("browser"))


def _page(folder: Path) -> Path:
    jobbench(*RUN, "--policy", "drain", "--label", "main", cwd=folder)
    jobbench(*RUN, "--policy", "take-ahead", "--take-ahead", "4", "--label", "pr", cwd=folder)
    jobbench("compare", "main", "pr", "--html", "report.html", cwd=folder)
    jobbench("report", "pr", "--html", "run.html", cwd=folder)
    return folder / "report.html"


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory, machine_share: MachineShare) -> Path:
    with machine_share.shared():
        return _crowded(tmp_path_factory.mktemp("crowded"))


def _crowded(folder: Path) -> Path:
    """A comparison of generated results with long labels, 8 reps against 6, a stalled, a
    partial and an outlier rep, machine load, a side whose every rep ran on a full machine of
    many CPUs (the widest machine cells), and an incomplete side: the widest page."""
    reports = folder / "reports"
    reports.mkdir()
    a, b = "runpod-sdk-1.10.0-baseline-with-a-long-label", "runpod-sdk-1.12.0-take-ahead-candidate"
    flagged = {2: RepEnd(anomalies=[STALL], machine=BUSY), 3: RepEnd(partial="worker died")}
    small(reports, a, (0.5, 0.51, 0.49, 0.5, 0.5, 0.505, 0.495, 0.9), ends=flagged)
    full = {**(BUSY or {}), "cpu_busy": 1.0, "cpus": 128, "load1_start": 123.45, "load1_end": 130.5}
    on_a_full_machine = {n: RepEnd(anomalies=[SATURATED], machine=full) for n in range(1, 7)}
    six = (0.45, 0.46, 0.44, 0.45, 0.45, 0.455)
    small(reports, b, six, ends=on_a_full_machine, error="interrupted (Ctrl-C)")
    done = run_jobbench("compare", a, b, "--html", "crowded.html", cwd=folder, timeout_s=180)
    assert (folder / "crowded.html").is_file(), done.stderr
    return folder / "crowded.html"


def screenshot(url: str, png: Path, *extra: str) -> str:
    """Load `url`, save a 1200 x 1600 screenshot, return Chromium's log (stderr)."""
    profile = png.with_suffix(".profile")
    where = [f"--user-data-dir={profile}", f"--screenshot={png}", "--window-size=1200,1600"]
    done = subprocess.run(
        [CHROMIUM, *FLAGS, *extra, *where, url],
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


# --- layout at 1,400 px ---------------------------------------------------------------------

LAYOUT_CHECK = """
for (const d of document.querySelectorAll("details")) d.open = true;
const out = {width: innerWidth, page: [document.documentElement.scrollWidth,
  document.documentElement.clientWidth], overflow: [], clipped: [], texts: 0, cells: 0};
for (const el of document.body.querySelectorAll("*")) {
  if (el instanceof SVGElement || el.clientWidth === 0) continue;
  out.cells += el.matches("td, th");
  if (el.scrollWidth > el.clientWidth)
    out.overflow.push(`${el.tagName}.${el.className} ${el.scrollWidth} > ${el.clientWidth}: ` +
      el.textContent.slice(0, 60));
}
for (const svg of document.querySelectorAll("svg")) {
  const box = svg.viewBox.baseVal, toSvg = svg.getScreenCTM().inverse();
  for (const text of svg.querySelectorAll("text")) {
    out.texts += 1;
    const b = text.getBBox(), m = toSvg.multiply(text.getScreenCTM());
    const corners = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height],
      [b.x + b.width, b.y + b.height]].map(([x, y]) => new DOMPoint(x, y).matrixTransform(m));
    const xs = corners.map(p => p.x), ys = corners.map(p => p.y);
    if (Math.min(...xs) < box.x - 0.5 || Math.max(...xs) > box.x + box.width + 0.5 ||
        Math.min(...ys) < box.y - 0.5 || Math.max(...ys) > box.y + box.height + 0.5)
      out.clipped.push(`"${text.textContent}" x ${Math.min(...xs).toFixed(1)}..` +
        `${Math.max(...xs).toFixed(1)} of ${box.width} in ${svg.getAttribute("aria-label")}`);
  }
}
const pre = document.createElement("pre");
pre.id = "layout-check";
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
"""


def layout(page: Path, width: int = 1400) -> dict[str, Any]:
    """LAYOUT_CHECK's findings on `page` in a `width` px window: a copy of the page whose
    policy lets that one inline script run (the page itself runs none)."""
    text = page.read_text()
    policy = "default-src 'none'; style-src 'unsafe-inline'"
    assert policy in text or "Content-Security-Policy" not in text
    text = text.replace(policy, f"{policy}; script-src 'unsafe-inline'")
    copy = page.with_name(f"{page.stem}.checked.html")
    script = f"<script>{LAYOUT_CHECK}</script>"
    copy.write_text(
        text.replace("</body>", f"{script}</body>") if "</body>" in text else text + script
    )
    profile = page.with_name(f"{page.stem}.profile")
    where = [f"--user-data-dir={profile}", f"--window-size={width},1000", "--dump-dom"]
    done = subprocess.run(
        [CHROMIUM, *FLAGS, *where, copy.as_uri()], capture_output=True, text=True, timeout=120
    )
    found = re.search(r'<pre id="layout-check">(.*?)</pre>', done.stdout, flags=re.S)
    assert found, f"the check did not run (exit {done.returncode}): {done.stderr[-2000:]}"
    result: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    assert result["width"] == width, result
    return result


def assert_fits(result: dict[str, Any]) -> None:
    scroll, client = result["page"]
    assert scroll <= client, f"the page scrolls sideways: {scroll} px in {client} px"
    assert result["overflow"] == [], "\n".join(result["overflow"])
    assert result["clipped"] == [], "\n".join(result["clipped"])


def test_the_layout_check_sees_overflow_and_clipped_labels(tmp_path: Path) -> None:
    """Proof the checks below can fail: a table wider than its box, a label past the edge."""
    bad = tmp_path / "bad.html"
    cells = "".join(f"<td>{'figure ' * 3}{i}</td>" for i in range(40))
    bad.write_text(
        '<!DOCTYPE html><div style="overflow-x:auto"><table><tr>'
        f'{cells}</tr></table></div><svg viewBox="0 0 100 40" width="100">'
        '<text x="90" y="20">ideal 16.050 s</text></svg>'
    )
    result = layout(bad)
    assert any(line.startswith("DIV.") for line in result["overflow"]), result
    (clipped,) = result["clipped"]
    assert clipped.startswith('"ideal 16.050 s" x 90.0..'), clipped


@pytest.mark.parametrize("name", ["report.html", "run.html"])
def test_pages_of_real_runs_fit_1400_px(page: Path, name: str) -> None:
    result = layout(page.with_name(name))
    assert result["texts"] > 50 and result["cells"] > 50  # it measured the page
    assert_fits(result)


def test_the_widest_page_fits_1400_px(crowded: Path) -> None:
    result = layout(crowded)
    assert result["texts"] > 200 and result["cells"] > 150
    assert_fits(result)
