"""The server's command-line options, defined once for both entry points: `python -m fake_queue`
and `jobbench serve` hand their argv to the one parser built here (argparse) and get one frozen
`ServeOptions`, or an `OptionsError` whose message is the whole one-line error; only
`settings_from_options` (fake_queue.settings) turns options into ServerSettings. The flags' help
texts are the queue's own, so jobbench's latency flags read LATENCY_HELP here (jobbench's CLI
imports this module on every start: stdlib only, argparse ~4 ms).

A bad value or a mistyped flag is told as jobbench tells its own: a number that is not one
says what to write (`--port 8e3: write a whole number, e.g. 8000`), with the readers here, which
jobbench's flags use too (jobbench/commands/requests/flag.py); a mistyped flag the flags most
like it, closest first, in jobbench's words (cli/conventions.py, which this package cannot
import; tests/unit/test_cli_conventions.py holds the two to the same words).
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

LATENCY_HELP = "seconds, or kind:a,b (uniform, normal, lognormal), or samples:FILE"
TAKE_EXTRA_HELP = "a take claims up to N jobs more than it asked for (a server-side fix)"
DESCRIPTION = "Serve the fake RunPod queue (worker, client and bench-control APIs) until Ctrl-C."


@dataclass(frozen=True)
class Flag:
    """One flag: how it reads (text, whole, seconds, repeat or switch) and, for a number, the
    example its error gives."""

    name: str
    metavar: str
    help: str
    reads: str = "text"
    example: str = ""


# The defaults quoted are ServerSettings' (tests/e2e/test_serve.py checks that they agree).
SERVE_FLAGS: tuple[Flag, ...] = (
    Flag("--host", "ADDR", "bind address (default 127.0.0.1)"),
    Flag("--port", "PORT", "port; 0 picks a free one (default 8000)", "whole", "8000"),
    Flag("--endpoint-id", "ID", "endpoint id in /v2/ID/ (default local)"),
    Flag("--take-latency", "LATENCY", f"take answer delay: {LATENCY_HELP} (default 0.5)"),
    Flag("--wake-latency", "LATENCY", f"woken take's answer delay: {LATENCY_HELP} (default 0.05)"),
    Flag("--hold", "SECONDS", "long-poll hold, seconds (default 20)"),
    Flag("--done-latency", "LATENCY", f"job-done answer delay: {LATENCY_HELP} (default 0)"),
    Flag("--take-extra", "N", f"{TAKE_EXTRA_HELP} (default 0)", "whole", "4"),
    Flag("--api-key", "KEY", "require this key on every route"),
    Flag("--rate-limits", "MODE", "off | runpod (RunPod's documented limits; default off)"),
    Flag("--fault", "ROUTE:KIND:RATE", "repeatable, e.g. job-done:500:0.1", "repeat"),
    Flag("--seed", "N", "seed for sampled latencies and faults", "whole", "7"),
    Flag(
        "--header-timeout",
        "SECONDS",
        "seconds a request's headers may take to arrive (default 10)",
        "seconds",
        "10",
    ),
    Flag(
        "--idle-timeout",
        "SECONDS",
        "seconds an idle keep-alive connection stays open (default 60)",
        "seconds",
        "60",
    ),
    Flag(
        "--max-connections",
        "N",
        "open connections served; more are answered 503 (default 16384)",
        "whole",
        "16384",
    ),
    Flag("--config", "FILE", "TOML file with these settings; the flags given override its values"),
    Flag(
        "--ready-json",
        "",
        "print one JSON line {url, endpoint_url} when ready (for jobbench run)",
        "switch",
    ),
)
SERVE_HELP: dict[str, str] = {f.name: f.help for f in SERVE_FLAGS}


@dataclass(frozen=True)
class ServeOptions:
    """The flags as given: None (or empty) is a flag left out, which keeps the --config value."""

    host: str | None = None
    port: int | None = None
    endpoint_id: str | None = None
    take_latency: str | None = None
    wake_latency: str | None = None
    hold: str | None = None
    done_latency: str | None = None
    take_extra: int | None = None
    api_key: str | None = None
    rate_limits: str | None = None
    faults: tuple[str, ...] = ()  # --fault, in the order given
    seed: int | None = None
    header_timeout: float | None = None
    idle_timeout: float | None = None
    max_connections: int | None = None
    config: Path | None = None
    ready_json: bool = False


def flag(field_name: str) -> str:
    """The flag that sets a ServeOptions field: take_latency -> --take-latency."""
    return "--fault" if field_name == "faults" else "--" + field_name.replace("_", "-")


def field_of(flag_name: str) -> str:
    """The ServeOptions field a flag sets: --take-latency -> take_latency."""
    return "faults" if flag_name == "--fault" else flag_name[2:].replace("-", "_")


class OptionsError(ValueError):
    """Bad command-line options: the message is the one line after `error: `."""


# ---- reading the argv ----------------------------------------------------------------------


def parse_options(
    argv: Sequence[str] | None = None, prog: str = "python -m fake_queue"
) -> ServeOptions:
    """`argv`'s flags; -h prints the help and exits 0 (SystemExit); anything wrong is an
    OptionsError naming the flag and the fix."""
    parser = serve_parser(prog)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        parser.error_line(_not_an_option(unknown[0], _option_names(parser), f"{prog} -h"))
    values: dict[str, Any] = {}
    for spec in SERVE_FLAGS:
        given = getattr(args, field_of(spec.name))
        values[field_of(spec.name)] = _read(parser, spec, given)
    return ServeOptions(**values)


def _read(parser: _Parser, spec: Flag, given: Any) -> Any:
    if given is None or spec.reads in ("text", "switch"):
        return Path(given) if spec.name == "--config" and given is not None else given
    if spec.reads == "repeat":
        return tuple(given)
    try:
        if spec.reads == "whole":
            return whole_number(given, int(spec.example))
        return number(given, "a number of seconds", float(spec.example))
    except ValueError as exc:
        parser.error_line(f"{spec.name} {shlex.quote(given)}: {exc}")


class _Parser(argparse.ArgumentParser):
    """argparse with jobbench's errors: one line, raised as an OptionsError."""

    def error(self, message: str) -> NoReturn:
        # argparse's own words, e.g. "argument --port: expected one argument"
        what = re.sub(r"^argument (\S+?)(/\S+)?: ", r"\1: ", message)
        what = what.replace("expected one argument", "needs a value")
        self.error_line(f"{what}; see `{self.prog} -h`")

    def error_line(self, line: str) -> NoReturn:
        raise OptionsError(line)


class _HelpFormatter(argparse.HelpFormatter):
    """Help laid out as jobbench's: `Usage:`, then `Options:`, the texts in Click's column."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: Any = None) -> None:
        super().add_usage(usage, actions, groups, "Usage: " if prefix is None else prefix)


def serve_parser(prog: str) -> _Parser:
    """The flags of SERVE_FLAGS, every value read as text: `_read` converts them, with our
    messages."""
    parser = _Parser(
        prog=prog,
        usage="%(prog)s [OPTIONS]",
        description=DESCRIPTION,
        add_help=False,
        allow_abbrev=False,  # as Click: a flag is spelled whole
        formatter_class=_HelpFormatter,
    )
    parser._optionals.title = "Options"
    parser.add_argument("-h", "--help", action="help", help="Show this message and exit.")
    for spec in SERVE_FLAGS:
        dest = field_of(spec.name)
        if spec.reads == "switch":
            parser.add_argument(spec.name, dest=dest, action="store_true", help=spec.help)
        elif spec.reads == "repeat":
            parser.add_argument(
                spec.name, dest=dest, action="append", default=[], metavar=spec.metavar,
                help=spec.help,
            )  # fmt: skip
        else:
            parser.add_argument(spec.name, dest=dest, metavar=spec.metavar, help=spec.help)
    return parser


def _option_names(parser: argparse.ArgumentParser) -> list[str]:
    return [name for action in parser._actions for name in action.option_strings]


# ---- bad values and mistyped flags, in jobbench's words ------------------------------------


def whole_number(text: str, example: int) -> int:
    """An int from a flag's text, or ValueError(the fix): `8e3` suggests 8000, `abc` the
    flag's example. jobbench's own flags read whole numbers with it too."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        close = float(text)
    except ValueError:
        close = math.nan
    hint = round(close) if math.isfinite(close) and abs(close) < 1e15 else example
    raise ValueError(f"write a whole number, e.g. {hint}")


def number(text: str, what: str, example: float) -> float:
    """A float from a flag's text (inf and nan too: the bounds are checked later), or
    ValueError(the fix): `what` is "a number of seconds", say. jobbench's flags read it too."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"write {what}, e.g. {example:g}") from None


def _not_an_option(word: str, options: Sequence[str], help_command: str) -> str:
    """The line for a flag (or argument) that is not one: the flags most like it (up to 3,
    closest first, difflib's ratio 0.6 at least), where they are all. The server has no
    `--no-x` negative, which jobbench's ranking names only when it is the closest."""
    if not word.startswith("-"):
        return f"{shlex.quote(word)}: unexpected argument; see `{help_command}`"
    name = word.split("=", 1)[0]
    alike = {o for o in options if o.startswith("--") == name.startswith("--")}
    scored = sorted((-difflib.SequenceMatcher(None, name, o).ratio(), o) for o in alike)
    close = [o for score, o in scored if -score >= 0.6][:3]
    if not close:
        return f"{name}: no such option; see `{help_command}`"
    others = f" (or {', '.join(close[1:])})" if close[1:] else ""
    return f"{name}: no such option; did you mean {close[0]}{others}? (see `{help_command}`)"
