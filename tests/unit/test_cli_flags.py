"""A request's fields as a Typer command (jobbench/cli/flags.py): the flags in the fields' order,
a group's where it stands, a default written as text shown so and read as typed text is, a
reader's words for a bad value; and for every command, the request the command line makes
when no flag is given is the request's own default: one declaration of each default."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Any

import pytest
import typer

from jobbench.cli import app
from jobbench.cli.conventions import App, BadValue, Group, Told, usage_line
from jobbench.cli.flags import request_of, takes
from jobbench.commands.requests.compare import CompareRequest, GateRequest
from jobbench.commands.requests.flag import argument, flag, group, whole
from jobbench.commands.requests.locust import LocustRequest
from jobbench.commands.requests.report import HistoryRequest, ReportRequest
from jobbench.commands.requests.run import RunRequest
from jobbench.commands.requests.sweep import SweepRequest
from jobbench.commands.requests.trend import BisectRequest, TrendRequest
from jobbench.commands.requests.workers import WorkersFlags
from jobbench.core.run.settle import parse_duration


@dataclass(frozen=True)
class Pair:
    left: int = flag(1, "--left", metavar="N", read=whole(2), help="the left one")
    right: str | None = flag(None, "--right", metavar="TEXT", help="the right one")


@dataclass(frozen=True)
class Toy:
    name: str = argument("NAME", "what it is called")()
    budget_s: float = flag(
        "45m", "--budget", metavar="DURATION", read=parse_duration, help="how long"
    )
    pair: Pair = group(Pair)
    tags: tuple[str, ...] = flag((), "--tag", metavar="TAG", help="repeatable", repeat=True)
    loud: bool = flag(False, "--loud", help="say more")


made: list[Toy] = []
toy_app = App(cls=Group, add_completion=False, rich_markup_mode=None)


@toy_app.command()
@takes(Toy)
def toy(request: Toy) -> int:
    """Make a toy."""
    made.append(request)
    return 0


@toy_app.command()
def other() -> None:
    """A second command, so the app is a group."""


TOY = typer.main.get_command(toy_app)


def run_toy(*args: str) -> Any:
    """The exit code of `toy ARGS` (exit_with's, which Click returns outside standalone mode).
    A command leaves Ctrl-C and SIGTERM ignored, for the exit that follows it: this process
    goes on, with its handlers back."""
    made.clear()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return TOY.main(["toy", *args], standalone_mode=False)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def test_the_flags_are_the_fields_in_order_with_a_text_default_shown_as_written() -> None:
    command = TOY.commands["toy"]  # type: ignore[attr-defined]
    assert [p.opts for p in command.params] == [
        ["name"],
        ["--budget"],
        ["--left"],
        ["--right"],
        ["--tag"],
        ["--loud"],
    ]
    assert command.help == "Make a toy."
    ctx = command.make_context("toy", ["x"])
    budget = command.params[1]
    assert budget.get_help_record(ctx)[1] == "how long  [default: 45m]"


def test_the_values_given_make_the_request_and_none_given_make_its_defaults() -> None:
    sigint = signal.getsignal(signal.SIGINT)
    assert run_toy("x", "--budget", "2h", "--left", "3", "--tag", "a", "--tag", "b", "--loud") == 0
    assert made == [Toy("x", 7200.0, Pair(3, None), ("a", "b"), True)]
    assert run_toy("y") == 0
    assert made == [Toy("y")] and made[0].budget_s == 45 * 60.0
    assert signal.getsignal(signal.SIGINT) is sigint  # the tests after this one get Ctrl-C


@pytest.mark.parametrize(
    ("args", "error", "line"),
    [
        (["--left", "1e3"], BadValue, "--left 1e3: write a whole number, e.g. 1000"),
        (["--budget", "soon"], Told, "--budget 'soon': write a duration like 30m, 1h or 600s"),
    ],
)
def test_a_readers_words_name_the_flag(args: list[str], error: type[Exception], line: str) -> None:
    with pytest.raises(error) as refused:
        run_toy("x", *args)
    assert usage_line(refused.value) == line
    assert made == []  # no request is made of a bad value


GROUP = typer.main.get_command(app)
REQUESTS: dict[str, tuple[type[Any], list[str], dict[str, Any]]] = {
    "run": (RunRequest, [], {}),
    "sweep": (SweepRequest, [], {}),
    "workers": (WorkersFlags, ["--server", "http://q"], {"server": "http://q"}),
    "compare": (CompareRequest, ["a", "b"], {"baseline": "a", "candidate": "b"}),
    "gate": (GateRequest, ["a", "b"], {"baseline": "a", "candidate": "b"}),
    "report": (ReportRequest, ["x", "--html", "r.html"], {"name": "x", "html": "r.html"}),
    "history": (HistoryRequest, [], {}),
    "trend": (TrendRequest, ["a..b"], {"revrange": "a..b"}),
    "bisect": (BisectRequest, ["a", "b"], {"good": "a", "bad": "b"}),
    "locust": (LocustRequest, [], {}),
}


def test_every_command_but_serve_is_made_from_a_request() -> None:
    assert set(REQUESTS) == set(GROUP.commands) - {"serve"}  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", REQUESTS)
def test_a_commands_defaults_are_its_requests_own(name: str) -> None:
    request, args, given = REQUESTS[name]
    command = GROUP.commands[name]  # type: ignore[attr-defined]
    ctx = command.make_context(name, list(args))
    if "html" in given:
        given = {**given, "html": ctx.params["html"]}  # a Path, as its reader made it
    assert request_of(request, ctx.params) == request(**given)
