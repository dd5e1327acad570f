"""Where a name's result is: the one rule `compare` saves by and `compare` / `report` find by."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobbench.results.store import find_result, safe_label


def test_find_result_uses_the_label_a_run_is_saved_under(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = Path("reports")
    assert safe_label("feature/take ahead") == "feature-take-ahead"
    assert find_result("feature/take ahead", out) == out / "feature-take-ahead.json"
    assert find_result("a-vs-b.json", out) == out / "a-vs-b.json"  # a file name in out
    assert find_result("old/run.json", out) == Path("old/run.json")  # no guess elsewhere
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "run.json").write_text("{}")
    assert find_result("old/run.json", out) == Path("old/run.json")
    (tmp_path / "main").write_text("{}")
    assert find_result("main", out) == Path("main")  # an existing file as given
