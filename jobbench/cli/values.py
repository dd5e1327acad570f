"""How jobbench's flags read numbers: a bad one is one line naming the flag, the value and what
to write, `--burst 1e3: write a whole number, e.g. 1000`, not the type checker's sentence.
`python -m fake_queue` words its own flags' numbers alike (fake_queue/options.py, which cannot
import jobbench; tests/unit/test_cli_conventions.py holds the two to the same words)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import typer


class BadValue(typer.BadParameter):
    """A flag's text that is not what the flag takes; cli/conventions.py names the flag before
    it."""

    def __init__(self, text: str, fix: str) -> None:
        super().__init__(fix)
        self.text = text


def whole(example: int) -> Callable[[Any], int]:
    """A Typer parser of whole numbers; `example` is the fix's, when the text is no number."""

    def read(value: Any) -> int:
        if isinstance(value, int):  # a default
            return value
        try:
            return whole_number(str(value), example)
        except ValueError as exc:
            raise BadValue(str(value), str(exc)) from None

    return read


def decimal(example: float, what: str = "a number") -> Callable[[Any], float]:
    """A Typer parser of numbers (`what`: "a number of seconds", say)."""

    def read(value: Any) -> float:
        if isinstance(value, int | float):  # a default
            return float(value)
        try:
            return number(str(value), what, example)
        except ValueError as exc:
            raise BadValue(str(value), str(exc)) from None

    return read


def seconds(example: float) -> Callable[[Any], float]:
    return decimal(example, "a number of seconds")


def whole_number(text: str, example: int) -> int:
    """An int from a flag's text, or ValueError(the fix): `1e3` suggests 1000, `abc` the example."""
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
    ValueError(the fix)."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"write {what}, e.g. {example:g}") from None
