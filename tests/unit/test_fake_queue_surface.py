"""fake_queue's public surface (fake_queue/api.py) and the checks that hold jobbench and
benchmarks/ to it (scripts/check_imports.py): an import past the surface is named, one through it
is not, and today's jobbench and benchmarks/ pass."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import grimp

import fake_queue.api

ROOT = Path(__file__).resolve().parents[2]


def _check_imports() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "check_imports", ROOT / "scripts" / "check_imports.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


check = _check_imports()


def test_a_benchmark_importing_past_the_surface_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "benchmarks"
    (folder / "timed").mkdir(parents=True)
    (folder / "through.py").write_text(
        "from fake_queue.api import JobQueue, LatencyModel\n"
        "from fake_queue import precise_loop\n"
        "from fake_queue.queue import scalers\n"
        "import fake_queue.protocol\n"
        "from fake_queue.options import ServeOptions\n"
        "from jobbench.core.sim.engine import simulate_rep\n"
    )
    (folder / "past.py").write_text(
        "from fake_queue.queue.latency import LatencyModel\n"
        "from fake_queue.queue import virtual_clock\n"
    )
    (folder / "timed" / "inside.py").write_text(
        "def run() -> None:\n    import fake_queue.http.server as server\n"
    )
    assert check.benchmark_imports(folder) == [
        "benchmarks/past.py imports fake_queue.queue.latency: use fake_queue.api",
        "benchmarks/past.py imports fake_queue.queue.virtual_clock: use fake_queue.api",
        "benchmarks/timed/inside.py imports fake_queue.http.server: use fake_queue.api",
    ]


def test_a_benchmark_that_patches_the_servers_internals_reaches_those_alone(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "benchmarks"
    folder.mkdir()
    (folder / "server_variants.py").write_text(
        "import fake_queue.http.server as server\n"
        "from fake_queue.queue.latency import LatencyModel\n"
    )
    assert check.benchmark_imports(folder) == [
        "benchmarks/server_variants.py imports fake_queue.queue.latency: use fake_queue.api"
    ]


def test_jobbench_importing_past_the_surface_is_named() -> None:
    graph = grimp.ImportGraph()
    for module in ("fake_queue.options", "fake_queue.precise_loop"):
        graph.add_module(module)
    graph.add_import(importer="jobbench.measure.events", imported="fake_queue.api")
    graph.add_import(importer="jobbench.workers.raw_http", imported="fake_queue.precise_loop")
    graph.add_import(importer="jobbench.core.sim.engine", imported="fake_queue.queue.job_queue")
    graph.add_import(importer="fake_queue.api", imported="fake_queue.queue.job_queue")
    graph.add_import(importer="fake_queue.protocol", imported="aiohttp")
    assert check.outside_surface(graph) == [
        "jobbench.core.sim.engine imports fake_queue.queue.job_queue: use fake_queue.api",
        "fake_queue.protocol imports aiohttp: a module of fake_queue's surface imported directly "
        "may import only the standard library (else move it into fake_queue.api)",
        "fake_queue.queue.scalers is named as fake_queue's surface but does not exist",
    ]


def test_todays_benchmarks_use_the_surface_alone() -> None:
    assert check.benchmark_imports(ROOT / "benchmarks") == []


def test_every_name_of_the_surface_is_there() -> None:
    missing = [name for name in fake_queue.api.__all__ if not hasattr(fake_queue.api, name)]
    assert missing == []
