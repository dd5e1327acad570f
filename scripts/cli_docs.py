"""Write docs/cli.md, every command's usage, help and flags, from the Typer app itself.

    python scripts/cli_docs.py                  # rewrites docs/cli.md
    python scripts/cli_docs.py --output FILE    # writes FILE instead (scripts/check compares)

`typer jobbench.cli utils docs` does not fit this app: it cuts each command's description in the
list, writes an argument as `BASELINE <str>` and finds no flag of `jobbench serve`, whose flags
`python -m fake_queue`'s parser reads. This script walks the Click command tree instead and
writes each flag's help record as `-h` shows it (jobbench/cli/conventions.py), unwrapped: the
document depends on no terminal width and holds no colour.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from typing import Any

import typer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's jobbench, whatever the venv has installed

from fake_queue.options import SERVE_FLAGS  # noqa: E402
from jobbench.cli import app  # noqa: E402

OUTPUT = ROOT / "docs" / "cli.md"
PROG = "jobbench"
HEADER = """# Command line reference

Every command's usage, description and flags, as `jobbench COMMAND -h` prints them. Generated
from the Typer app by `python scripts/cli_docs.py`: do not edit it by hand (`scripts/check`
fails when it is out of date). What the commands are for: the [README](../README.md).
"""
# `jobbench serve` hands its arguments to `python -m fake_queue`'s parser (jobbench/cli/queue.py),
# so Click knows none of its flags: they are that parser's, listed from the same definitions.
FOREIGN_FLAGS: dict[str, list[tuple[str, str]]] = {
    "serve": [
        ("-h, --help", "Show this message and exit."),
        *((f"{f.name} {f.metavar}".strip(), f.help) for f in SERVE_FLAGS),
    ]
}


def render() -> str:
    """The whole document: the app's usage and options, its commands, then one section each."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)  # an app of several commands is a group
    ctx = group.make_context(PROG, [], resilient_parsing=True)
    shown = [
        (name, command)
        for name in group.list_commands(ctx)  # in the order -h lists them
        if (command := group.get_command(ctx, name)) is not None and not command.hidden
    ]
    parts = [HEADER, *_app_section(group, ctx, shown)]
    for name, command in shown:
        parts.extend(_command_section(name, command, ctx))
    return "\n".join(parts)


def _app_section(group: Any, ctx: Any, commands: list[tuple[str, Any]]) -> list[str]:
    lines = ["## jobbench", "", *_usage(group, ctx), *_paragraphs(group.help), ""]
    lines += ["Commands:", ""]
    for name, command in commands:
        first = _paragraphs(command.help)[0]
        lines.append(f"- [`{PROG} {name}`](#{PROG}-{name}): {first}")
    return [*lines, "", *_flag_list("Options", _option_records(group, ctx))]


def _command_section(name: str, command: Any, parent: Any) -> list[str]:
    ctx = command.make_context(name, [], parent=parent, resilient_parsing=True)
    lines = [f"## {PROG} {name}", "", *_usage(command, ctx)]
    for paragraph in _paragraphs(command.help):
        lines += [paragraph, ""]
    arguments = [
        (str(p.metavar), record[1])
        for p in command.get_params(ctx)
        if p.param_type_name == "argument" and (record := p.get_help_record(ctx)) is not None
    ]
    lines += _flag_list("Arguments", arguments)
    return lines + _flag_list("Options", FOREIGN_FLAGS.get(name) or _option_records(command, ctx))


def _usage(command: Any, ctx: Any) -> list[str]:
    pieces = " ".join(command.collect_usage_pieces(ctx))
    return ["```", f"{ctx.command_path} {pieces}", "```", ""]


def _option_records(command: Any, ctx: Any) -> list[tuple[str, str]]:
    """Each option's (flags and value, help with its default), as Click formats them for -h."""
    return [
        record
        for p in command.get_params(ctx)
        if p.param_type_name == "option" and (record := p.get_help_record(ctx)) is not None
    ]


def _flag_list(title: str, records: list[tuple[str, str]]) -> list[str]:
    if not records:
        return []
    lines = [f"{title}:", ""]
    for flags, text in records:
        lines.append(f"- `{flags}`: {' '.join(text.split())}")
    return [*lines, ""]


def _paragraphs(text: str | None) -> list[str]:
    """A help text's paragraphs, each on one line (Click cuts the help at a form feed)."""
    body = inspect.cleandoc((text or "").split("\f")[0])
    return [" ".join(p.split()) for p in body.split("\n\n") if p.strip()] or [""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write docs/cli.md from the Typer app.")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="default docs/cli.md")
    args = parser.parse_args(argv)
    args.output.write_text(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
