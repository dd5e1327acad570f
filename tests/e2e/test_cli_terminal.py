"""jobbench on a real terminal (a pty): Ctrl-C typed during a run, with the rich progress bar
and with the plain progress lines (CI=true), leaves its message on a line of its own: not after
the bar, not after the `^C` the terminal echoes, and the cursor shown again."""

from __future__ import annotations

import os
import pty
import re
import select
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ["run", "--worker", "model", "-w", "1", "-s", "4", "-b", "400", "-j", "0.05", "-n", "3"]


def typed_ctrl_c(argv: list[str], env: dict[str, str], started: bytes) -> tuple[bytes, int]:
    """Run `jobbench ARGV` on a pty, type Ctrl-C once `started` shows, read to the end: the
    line discipline sends SIGINT to the foreground group and echoes ^C, as a terminal does."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: jobbench, in the foreground of the pty
        os.execve(sys.executable, [sys.executable, "-m", "jobbench", *argv], env)
    out, typed, deadline = b"", False, time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the child closed the pty
                    break
                if not chunk:
                    break
                out += chunk
            if not typed and started in out:
                time.sleep(0.3)  # into the rep
                os.write(fd, b"\x03")
                typed = True
    finally:
        os.close(fd)
        _, status = os.waitpid(pid, 0)
    assert typed, out[-2000:]
    return out, os.waitstatus_to_exitcode(status)


def screen(raw: bytes) -> list[str]:
    """The lines a terminal shows after `raw`: text, CR, LF, erase in line and cursor up; the
    other escapes (colours, the cursor hidden or shown) change no character."""
    lines, row, col = [""], 0, 0
    tokens = re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]", raw.decode(errors="replace"))
    for token in tokens:
        if token == "\r":
            col = 0
        elif token == "\n":
            row, col = row + 1, 0
            lines += [""] * (row + 1 - len(lines))
        elif token.startswith("\x1b["):
            code, arg = token[-1], token[2:-1]
            if code == "K":  # 0 (or none): to the end of the line; 2: the whole line
                lines[row] = "" if arg == "2" else lines[row][:col]
            elif code == "A":
                row = max(0, row - int(arg or 1))
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + token + line[col + 1 :]
            col += 1
    return [line.rstrip() for line in lines]


@pytest.mark.parametrize("bar", ["rich", "plain"])
def test_ctrl_c_during_a_run_prints_its_message_on_a_line_of_its_own(
    tmp_path: Path, bar: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(PYTHONPATH=str(ROOT), TERM="xterm", COLUMNS="100")
    if bar == "plain":
        env["CI"] = "true"
    started = b"/400" if bar == "rich" else b"rep 1/3, 400 jobs"
    out, code = typed_ctrl_c([*RUN, "-o", str(tmp_path / "reports")], env, started)
    assert code == 130, out[-2000:]
    assert b"^C" in out  # the terminal echoed it, where the cursor was
    shown = screen(out)
    said = [line for line in shown if "interrupted" in line]
    assert len(said) == 1 and said[0].startswith("error: interrupted"), shown[-8:]
    assert not any("\u2501" in line for line in shown), shown[-8:]  # no bar left on screen
    if b"\x1b[?25l" in out:  # rich hid the cursor: shown again by the end
        assert out.rindex(b"\x1b[?25h") > out.rindex(b"\x1b[?25l")
