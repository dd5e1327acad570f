"""Where results go is checked before anything runs: a file given as --out, a folder nobody can
write, an --html or --markdown path that cannot take a file are one-line usage errors (exit 2)
naming the flag, never a traceback after the run. In this process: nothing starts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.unit.cli import run_cli

DATA = Path(__file__).parent / "data"
MODEL = ["run", "--worker", "model", "--workers", "1", "--burst", "4", "--reps", "1"]
UNWRITABLE = "/proc/jobbench-no-such-folder"  # no one can make a folder here, root included


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--out", "FILE"], "--out FILE: not a folder"),
        (["--out", UNWRITABLE], f"--out {UNWRITABLE}: cannot write there"),
        (["--html", f"{UNWRITABLE}/x.html"], f"--html {UNWRITABLE}: cannot write there"),
        (["--html", "."], "--html .: is a folder"),
    ],
)
def test_run_refuses_an_output_it_could_not_write_before_starting(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    said: str,
) -> None:
    (tmp_path / "FILE").write_text("not a folder")
    assert run_cli(monkeypatch, *MODEL, *args, cwd=tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {said}") and len(err.splitlines()) == 1, err
    assert not (tmp_path / "reports").exists()  # nothing ran, nothing was left behind


@pytest.mark.parametrize("flag", ["--out", "--markdown", "--html"])
def test_compare_of_saved_results_refuses_an_unwritable_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str
) -> None:
    for name in ("old-a.json", "old-b.json"):
        shutil.copy(DATA / name, tmp_path / name)
    target = UNWRITABLE if flag == "--out" else f"{UNWRITABLE}/comment.md"
    code = run_cli(monkeypatch, "compare", "old-a.json", "old-b.json", flag, target, cwd=tmp_path)
    assert code == 2
    assert f"error: {flag} {UNWRITABLE}" in capsys.readouterr().err
    assert not list(tmp_path.glob("reports/*-vs-*"))


def test_report_refuses_an_unwritable_html_before_reading_anything(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = run_cli(monkeypatch, "report", "missing", "--html", f"{UNWRITABLE}/r.html", cwd=tmp_path)
    assert code == 2 and f"--html {UNWRITABLE}: cannot write there" in capsys.readouterr().err
