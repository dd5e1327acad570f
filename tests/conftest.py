"""Shared fixtures: a real fake-queue server on a loopback port 0, latencies scaled down."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fake_queue.http.server import RunningServer, ServerThread
from fake_queue.queue.latency import LatencyModel
from fake_queue.settings import ServerSettings, settings_from_mapping
from tests.machine_share import MachineShare

# Tests run the model at 1/10 scale (50 ms takes, 5 ms wakes) so the suite stays fast.
FAST = {"take_latency": 0.05, "wake_latency": 0.005, "hold": 2.0}
E2E = Path(__file__).parent / "e2e"
# `.ci/run` sets this: there every program a test needs is installed, so a skipped test is a
# test that did not run, and the run fails (tests/programs.py skips them on a bare machine).
NO_SKIPS = "JOBBENCH_TESTS_NO_SKIPS"
NEXT_IS_QUIET = pytest.StashKey[bool]()
# The suite starts about 150 jobbench commands and hundreds of worker and queue processes. Where
# PYTHONDONTWRITEBYTECODE is set (the development VM sets it, and CI runs on one like it) no
# process keeps a compiled module: each command compiled jobbench from source again, about 0.5 s
# of CPU, and each xdist worker rewrote every test module's asserts, 8 s of CPU. On 2 cores the
# suite took 304-348 s so, 283-287 s with bytecode kept. Bytecode changes no behaviour under
# test: before any test module is imported and any process started, the suite and every
# process it starts may write it.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# The Ctrl-C tests send SIGINT to the processes they start. A suite started in the background by
# a non-interactive shell (`cmd &`) inherits SIGINT ignored, and an ignored signal stays ignored
# across exec, so every jobbench and worker process it started ignored those Ctrl-Cs (15 tests
# failed so). The suite takes SIGINT back as Python's own before xdist starts its workers, so
# every process it starts gets the default a terminal would give it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/e2e runs the jobbench CLI or real worker processes: it is marked
    e2e like the few elsewhere that start workers, so `-m "not e2e"` leaves the fast ones.

    The files that hold the machine alone (a quiet test, or a fixture that takes the machine)
    go first: xdist hands files out in this order (--no-loadscope-reorder), and a file that asks
    for the machine at the start waits for nothing, where one asked for mid-run waits for every
    test then running. The rest stay in collection order: tests/e2e's few long tests before the
    many short ones of tests/integration and tests/unit, which fill in at the end."""
    for item in items:
        if item.path.is_relative_to(E2E):
            item.add_marker(pytest.mark.e2e)
    alone = {item.path for item in items if _is_quiet(item) or _takes_the_machine(item)}
    items.sort(key=lambda item: item.path not in alone)  # stable: in file order otherwise


def _takes_the_machine(item: pytest.Item) -> bool:
    return "machine_alone" in getattr(item, "fixturenames", ())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """A row of quiet tests keeps the machine alone from its first to its last."""
    item.stash[NEXT_IS_QUIET] = nextitem is not None and _is_quiet(nextitem)
    return (yield)


def forbidden_skips(reporter: Any) -> list[Any]:
    """The skipped tests' reports, where skips are not allowed; none otherwise."""
    if reporter is None or os.environ.get(NO_SKIPS) != "1":
        return []
    return list(reporter.stats.get("skipped", []))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Name each skipped test that was not allowed to be."""
    skipped = forbidden_skips(terminalreporter)
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} skipped, which {NO_SKIPS}=1 does not allow:")
    for report in skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        terminalreporter.write_line(f"  {report.nodeid}: {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run with a skip that was not allowed fails."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if forbidden_skips(reporter) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session", autouse=True)
def temp_folders_in_pytests_tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The /tmp/jobbench-* folder a failed run keeps (its logs, named in the error) lands in
    pytest's temp tree, which pytest prunes, not in /tmp for good: many tests fail on purpose.
    Every process a test starts inherits TMPDIR."""
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(tmp_path_factory.mktemp("tmpdir"))
    tempfile.tempdir = None  # read TMPDIR again
    yield
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before
    tempfile.tempdir = None


@pytest.fixture(scope="session")
def machine_share(tmp_path_factory: pytest.TempPathFactory) -> MachineShare:
    """The run's lock files: each xdist worker's temp folder lies in the run's own."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return MachineShare(None)
    return MachineShare(tmp_path_factory.getbasetemp().parent)


@pytest.fixture(scope="session")
def machine_alone(machine_share: MachineShare) -> MachineShare:
    """The machine share, for a module fixture that holds the machine alone (`alone()`): its
    file is run first (pytest_collection_modifyitems)."""
    return machine_share


@pytest.fixture(autouse=True)
def share_the_machine(
    request: pytest.FixtureRequest, machine_share: MachineShare
) -> Iterator[None]:
    """A `quiet` test runs alone, every other beside the others (tests/machine_share.py)."""
    if not _is_quiet(request.node):
        with machine_share.shared():
            yield
        return
    machine_share.keep_alone()
    try:
        yield
    finally:
        if not request.node.stash.get(NEXT_IS_QUIET, False):
            machine_share.release()


def _is_quiet(item: pytest.Item) -> bool:
    return item.get_closest_marker("quiet") is not None


@pytest.fixture
def start_server() -> Iterator[Callable[..., RunningServer]]:
    """Start servers with `start_server(take_latency=..., api_key=...)`; all stop at teardown."""
    threads: list[ServerThread] = []

    def start(**overrides: Any) -> RunningServer:
        values: dict[str, Any] = {**FAST, "port": 0, "seed": 1, **overrides}
        settings = settings_from_mapping(values, ServerSettings(latency=LatencyModel()))
        thread = ServerThread(settings)
        threads.append(thread)
        return thread.start()

    yield start
    for thread in threads:
        thread.stop()


@pytest.fixture
def server(start_server: Callable[..., RunningServer]) -> RunningServer:
    return start_server()


@pytest.fixture
def client(server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        yield http
