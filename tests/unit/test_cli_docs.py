"""docs/cli.md, written by scripts/cli_docs.py from the Typer app: a section for every command,
the flags of `jobbench serve` too (another parser reads them), and the same text whatever the
terminal (scripts/check compares the committed file with a fresh one)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import typer

from jobbench.cli import app

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "cli_docs.py"
GROUP = typer.main.get_command(app)
assert isinstance(GROUP, typer.core.TyperGroup)


def cli_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_docs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def section(document: str, command: str) -> str:
    return document.split(f"\n## jobbench {command}\n")[1].split("\n## ")[0]


def test_every_command_has_a_section_with_its_flags() -> None:
    document = cli_docs().render()
    for name in GROUP.commands:
        assert f"\n## jobbench {name}\n" in document
        assert f"(#jobbench-{name})" in document  # listed at the top, linked to its section
    run = section(document, "run")
    assert "\njobbench run [OPTIONS]\n" in run
    assert "\n- `--max-fail-ratio RATIO`: share of jobs that may end badly" in run
    assert "\n- `--port PORT`: port; 0 picks a free one (default 8000)\n" in section(
        document, "serve"
    )


def test_the_document_is_the_same_in_any_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    module = cli_docs()
    monkeypatch.setenv("COLUMNS", "40")
    narrow = module.render()
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert module.render() == narrow
    assert "\x1b[" not in narrow
