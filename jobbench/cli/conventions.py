"""How every jobbench command looks and answers, in Typer's Click classes: usage lines with
`BASELINE CANDIDATE`, never a Python type in the help, command descriptions whole; Click's usage
errors as jobbench's one line, `error: <what>; <fix>` (exit code 2), in place of Click's Usage /
Try / Error block; a mistyped command or flag answered with the names most like it, closest
first. A value is shown as the user typed it into the shell (shlex.quote: '' for empty, quoted
when it has spaces). `python -m fake_queue` answers a mistyped flag alike (fake_queue/options.py,
which cannot import jobbench; tests/unit/test_cli_conventions.py holds the two to the same
words)."""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Callable, Iterable
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

try:  # Typer 0.2x carries its own Click, whose exceptions these are
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - an older Typer runs on the click package
    from click import exceptions as click_errors  # type: ignore[no-redef]

UsageError = click_errors.UsageError
ClickException = click_errors.ClickException
NO_ARGS_IS_HELP: tuple[type[Exception], ...] = tuple(
    getattr(click_errors, name) for name in ("NoArgsIsHelpError",) if hasattr(click_errors, name)
)


class Told(UsageError):
    """A usage error whose message is the whole line already, the fix included."""


class BadValue(click_errors.BadParameter):
    """A flag's text that is not what the flag takes (a reader's ValueError, cli/flags.py):
    the line names the flag and the text before the fix."""

    def __init__(self, text: str, fix: str) -> None:
        super().__init__(fix)
        self.text = text


class Command(TyperCommand):
    """Every option shows a metavar (an explicit one, VALUE where a command gave none), and an
    argument its name in capitals, bare in the usage line (Typer writes `{baseline} <str>`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.param_type_name == "argument" and param.metavar is None:
                param.metavar = (param.name or "value").upper()
            elif param.metavar is None and not getattr(param, "is_flag", False):
                param.metavar = "VALUE"

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        allowed, ctx.allow_extra_args = ctx.allow_extra_args, True  # told below, our way
        try:
            rest = list(super().parse_args(ctx, args))
        except UsageError as exc:  # Click's parser raises some without the command's context
            exc.ctx = exc.ctx or ctx
            raise
        finally:
            ctx.allow_extra_args = allowed
        if rest and not allowed and not ctx.resilient_parsing:
            raise Told(not_an_option(rest[0], [], f"{ctx.command_path} -h"), ctx)
        return rest

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = str(param.metavar) if param.required else f"[{param.metavar}]"
                pieces.append(name + ("..." if param.nargs != 1 else ""))
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":  # its metavar, not Typer's "NAME <str>"
                arguments.append((str(param.metavar), record[1]))
            else:
                options.append(record)
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


class Group(TyperGroup):
    """Typer's group: each command's first paragraph whole in `jobbench -h` (Click cuts it at
    a full stop or the terminal's width), a command name that is none told as a mistyped flag
    is."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                first = (command.short_help or command.help or "").split("\n\n")[0]
                rows.append((name, " ".join(first.split())))  # wrapped, never cut
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            guess = did_you_mean(name, self.list_commands(ctx))
            help_hint = f"see `{ctx.command_path} -h`"
            fix = f"{guess} ({help_hint})" if guess else help_hint
            raise Told(f"{shlex.quote(name)}: no such command; {fix}", ctx)
        return super().resolve_command(ctx, args)


class App(typer.Typer):
    """typer.Typer whose commands are `Command`s, unless one asks for another class."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        kwargs["cls"] = kwargs.get("cls") or Command
        return super().command(*args, **kwargs)


def usage_line(exc: Any) -> str:
    """The one line (after `error: `) for a Click usage error, naming the flag and the fix."""
    ctx = exc.ctx
    help_command = f"{ctx.command_path} -h" if ctx is not None else "jobbench -h"
    param = getattr(exc, "param", None)
    if isinstance(exc, Told):
        return str(exc.message)
    if isinstance(exc, BadValue) and param is not None:
        return f"{flag_of(param)} {shlex.quote(exc.text)}: {exc.message}"
    if isinstance(exc, click_errors.NoSuchOption):
        options = [] if ctx is None else option_names(ctx)
        return not_an_option(exc.option_name, options, help_command)
    if isinstance(exc, click_errors.MissingParameter) and param is not None:
        what = f" ({param.help})" if param.help else ""
        return f"missing {spelled(param)}{what}; see `{help_command}`"
    if isinstance(exc, click_errors.BadOptionUsage) and "requires" in exc.message:
        return f"{exc.option_name}: needs a value; see `{help_command}`"
    if isinstance(exc, click_errors.BadParameter) and param is not None:
        return f"{flag_of(param)}: {sentence(exc.message)}; see `{help_command}`"
    return f"{sentence(exc.message)}; see `{help_command}`"


def flag_of(param: Any) -> str:
    """How the help names a parameter: its long flag, or an argument's metavar."""
    if param.param_type_name == "argument":
        return str(param.metavar or param.name.upper())
    return str(next((opt for opt in param.opts if opt.startswith("--")), param.opts[0]))


def spelled(param: Any) -> str:
    """`--html FILE` for an option, `CANDIDATE` for an argument."""
    if param.param_type_name == "argument" or not param.metavar:
        return flag_of(param)
    return f"{flag_of(param)} {param.metavar}"


def option_names(ctx: Any) -> list[str]:
    return [
        name
        for param in ctx.command.get_params(ctx)
        if param.param_type_name == "option"
        for name in (*param.opts, *param.secondary_opts)
    ]


def sentence(message: str) -> str:
    """Click's "Got unexpected extra argument (x)." as a clause: lower case, no full stop."""
    message = message.strip().rstrip(".")
    return message[:1].lower() + message[1:]


# ---- a mistyped name -----------------------------------------------------------------------


def similar(word: str, choices: Iterable[str]) -> list[str]:
    """Up to 3 choices most like a mistyped word, closest first (difflib's ratio, 0.6 at least);
    a `--no-x` negative only when it is the closest: `--wokers` is `--workers`, not `--no-yes`.

    Not difflib.get_close_matches: it measures each choice against the word, the other way
    round (the ratio is not symmetric) and lists equally close names in reverse order, which
    changes what is suggested for about one in eight one-letter slips of our flags."""
    scored = sorted((-difflib.SequenceMatcher(None, word, c).ratio(), c) for c in set(choices))
    close = [choice for score, choice in scored if -score >= 0.6]
    return (close[:1] + [c for c in close[1:] if not c.startswith("--no-")])[:3]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`did you mean --workers?`, `did you mean --workers (or --worker)?`, or "" (none is close)."""
    close = similar(word, choices)
    if not close:
        return ""
    others = f" (or {', '.join(close[1:])})" if close[1:] else ""
    return f"did you mean {close[0]}{others}?"


def not_an_option(word: str, options: Iterable[str], help_command: str) -> str:
    """The line for a flag (or argument) that is not one: what it is like, where they are all."""
    if not word.startswith("-"):
        return f"{shlex.quote(word)}: unexpected argument; see `{help_command}`"
    name = word.split("=", 1)[0]
    guess = did_you_mean(name, (o for o in options if o.startswith("--") == name.startswith("--")))
    fix = f"{guess} (see `{help_command}`)" if guess else f"see `{help_command}`"
    return f"{name}: no such option; {fix}"
