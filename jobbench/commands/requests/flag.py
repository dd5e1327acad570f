"""How a command's flag is declared: once, on the field of its request that takes the value, with
its names, the name of its value, its help, its default and its reader (the text -> the value,
checked). cli/flags.py makes a Typer command of a request's fields; nothing here imports typer,
so a request stays plain data below the CLI.

A reader says what is wrong in one of two ways: ValueError(the fix), which the CLI prints after
the flag and the text as typed (`--burst 1e3: write a whole number, e.g. 1000`), or a UsageError
whose message is the whole line (a check shared with a TOML key words its own). Numbers read as
`python -m fake_queue` reads its own flags' (fake_queue/options.py, stdlib only, which cannot
import jobbench: the readers live there, once)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from fake_queue.options import number, whole_number

Reader = Callable[[str], Any]

FLAG = "flag"  # a field's metadata key: its Flag
GROUP = "group"  # a field's metadata key: the request-like dataclass whose flags it holds


class Required:
    """A flag with no default: the command line must give it."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = Required()


@dataclass(frozen=True)
class Flag:
    """One flag (or argument, `argument=True`): `names` the option's spellings, long one first
    (none: the field's name as `--name`, and a bool's `--name/--no-name`); `read` turns the
    text into the value; `repeat` takes it more than once, into a tuple."""

    names: tuple[str, ...] = ()
    metavar: str | None = None
    help: str | None = None
    read: Reader | None = None
    default: Any = REQUIRED
    argument: bool = False
    repeat: bool = False

    def __call__(self, default: Any = REQUIRED) -> Any:
        """The request's field that takes this flag, with `default` (else the flag's own). A
        default written as text (`"45m"`) is shown so in the help and read as a typed one is."""
        flag = self if default is REQUIRED else replace(self, default=default)
        metadata = {FLAG: flag}
        if flag.default is REQUIRED:
            return field(metadata=metadata)
        if isinstance(flag.default, str) and flag.read is not None:
            return field(default_factory=partial(flag.read, flag.default), metadata=metadata)
        return field(default=flag.default, metadata=metadata)


def option(
    *names: str,
    metavar: str | None = None,
    help: str | None = None,
    read: Reader | None = None,
    default: Any = REQUIRED,
    repeat: bool = False,
) -> Flag:
    """A flag several requests take (each field: `OUT()`, or `OUT(other_default)`)."""
    return Flag(names, metavar, help, read, default, repeat=repeat)


def flag(
    default: Any,
    *names: str,
    metavar: str | None = None,
    help: str | None = None,
    read: Reader | None = None,
    repeat: bool = False,
) -> Any:
    """The field of a flag only one request takes."""
    return option(*names, metavar=metavar, help=help, read=read, repeat=repeat)(default)


def argument(
    metavar: str | None = None,
    help: str | None = None,
    default: Any = REQUIRED,
    repeat: bool = False,
) -> Flag:
    """A positional argument (`metavar` None: the field's name in capitals); its field is
    `argument(...)()`, as an option's is `option(...)()`."""
    return Flag((), metavar, help, None, default, argument=True, repeat=repeat)


def group(kind: type[Any]) -> Any:
    """A field holding a dataclass whose own fields are flags, given where this field stands
    (the --cluster pair: commands/requests/shared.py ClusterRequest)."""
    return field(default_factory=kind, metadata={GROUP: kind})


# ---- readers -----------------------------------------------------------------------------


def whole(example: int) -> Callable[[str], int]:
    """A whole number; `example` is the fix's, when the text is no number."""
    return partial(whole_number, example=example)


def decimal(example: float, what: str = "a number") -> Callable[[str], float]:
    """A number (`what`: "a number of seconds", say)."""
    return partial(number, what=what, example=example)


def seconds(example: float) -> Callable[[str], float]:
    return decimal(example, "a number of seconds")


def path(text: str) -> Path:
    return Path(text)
