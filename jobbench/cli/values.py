"""How jobbench's flags read numbers, in the fake queue's words (fake_queue.options): a bad one
is one line naming the flag, the value and what to write, `--burst 1e3: write a whole number,
e.g. 1000`, not the type checker's sentence."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from fake_queue.options import number, whole_number


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
