"""A request's fields as a Typer command. Each field that declares a flag
(commands/requests/flag.py) is a parameter of the command's signature, in the fields' order (a
group's fields where the group stands); Typer reads that signature as it reads a function's.
Click's values become the request, made and run inside exit_with, so a request that reads what
it was given as it is made answers a bad value in one line too.

A reader's ValueError is Click's bad value (`--burst 1e3: write a whole number, e.g. 1000`,
cli/conventions.py), its UsageError the whole line as it words it; a value that is no text is
a default, already what the field holds."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import fields
from typing import Annotated, Any, TypeVar

import typer

from jobbench import errors
from jobbench.cli.app import exit_with
from jobbench.cli.conventions import BadValue, Told
from jobbench.commands.requests.flag import FLAG, GROUP, REQUIRED, Flag, Reader

Request = TypeVar("Request")


def takes(
    request: type[Request],
) -> Callable[[Callable[[Request], int]], Callable[..., None]]:
    """`@takes(RunRequest)` above `def run(request: RunRequest) -> int`: a Typer command whose
    flags are RunRequest's, whose help is the function's docstring and whose exit code is what
    the function returns."""

    def command_of(run: Callable[[Request], int]) -> Callable[..., None]:
        def command(**values: Any) -> None:
            exit_with(lambda: run(request_of(request, values)))

        parameters = [_parameter(name, flag) for name, flag in flags_of(request)]
        command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        command.__name__ = command.__qualname__ = run.__name__
        command.__doc__, command.__module__ = run.__doc__, run.__module__
        return command

    return command_of


def flags_of(request: type[Any]) -> Iterator[tuple[str, Flag]]:
    """(field name, flag) of each field that takes a flag, a group's fields where it stands."""
    for field in fields(request):
        if GROUP in field.metadata:
            yield from flags_of(field.metadata[GROUP])
        elif FLAG in field.metadata:
            yield field.name, field.metadata[FLAG]


def request_of(request: type[Any], values: dict[str, Any]) -> Any:
    """The request of Click's values (by parameter name), a group's fields made into it."""
    given: dict[str, Any] = {}
    for field in fields(request):
        if GROUP in field.metadata:
            given[field.name] = request_of(field.metadata[GROUP], values)
        elif FLAG in field.metadata:
            flag, value = field.metadata[FLAG], values[field.name]
            given[field.name] = (tuple(value) if value else flag.default) if flag.repeat else value
    return request(**given)


def _parameter(name: str, flag: Flag) -> inspect.Parameter:
    """The field as Typer's `name: Annotated[type, typer.Option(...)] = default`. The type says
    only what Click needs (a bool is a switch, a list repeats, None is no value); the reader
    makes the value."""
    parser = None if flag.read is None else _parser(flag.read)
    info: Any
    if flag.argument:
        info = typer.Argument(metavar=flag.metavar, help=flag.help)
    else:
        info = typer.Option(*flag.names, metavar=flag.metavar, help=flag.help, parser=parser)
    default = None if flag.repeat else flag.default
    kind: Any = str
    if isinstance(default, bool):
        kind = bool
    elif flag.repeat:
        kind = list[str] | None
    elif default is None:
        kind = str | None
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=inspect.Parameter.empty if default is REQUIRED else default,
        annotation=Annotated[kind, info],
    )


def _parser(read: Reader) -> Callable[[Any], Any]:
    def parse(value: Any) -> Any:
        if not isinstance(value, str):  # a default: the value already
            return value
        try:
            return read(value)
        except ValueError as exc:
            raise BadValue(value, str(exc)) from None
        except errors.UsageError as exc:
            raise Told(str(exc)) from None

    return parse
