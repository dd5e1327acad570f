"""Fail on any import cycle among jobbench and fake_queue modules, function-level imports included
(grimp's graph has every import statement, wherever it stands), on rich imported outside
jobbench/render/text/terminal.py, on anything but the standard library imported by the modules
runpod_entry.py imports from beside itself, and on jobbench or benchmarks/ importing a module of
fake_queue outside its public surface (fake_queue/api.py). The contracts import-linter can state
are in pyproject.toml.

    python scripts/check_imports.py
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import grimp

from fake_queue.api import STDLIB_ONLY_MODULES

RICH_IMPORTERS = {"jobbench.render.text.terminal"}
# What runpod_entry.py imports from its own folder, in the SDK's environment, where neither
# jobbench nor its dependencies are installed: each may import the standard library alone.
STDLIB_ONLY = ("jobbench.workers.bench_handler", "jobbench.workers.policies")
# fake_queue's public surface: its api module, and the modules imported directly because each is
# on the standard library alone (what worker processes, and jobbench's CLI at every start, import),
# which fake_queue/api.py names.
FAKE_QUEUE_API = "fake_queue.api"
FAKE_QUEUE_DIRECT = STDLIB_ONLY_MODULES
FAKE_QUEUE_SURFACE = frozenset((FAKE_QUEUE_API, *FAKE_QUEUE_DIRECT))
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
# The benchmarks that monkeypatch the server's internals to measure a change before anyone edits
# fake_queue/, and the internals each patches: reaching past the surface is what they are for.
PATCHES_INTERNALS = {
    "server_variants.py": frozenset(
        {
            "fake_queue.__main__",
            "fake_queue.http.http_util",
            "fake_queue.http.server",
            "fake_queue.queue.job_queue",
        }
    ),
    "http_parser.py": frozenset({"fake_queue.http", "fake_queue.http.fast_path"}),
}


def cycles(graph: grimp.ImportGraph) -> list[tuple[str, ...]]:
    """One shortest cycle through each direct import that closes one, each cycle once."""
    found: dict[frozenset[str], tuple[str, ...]] = {}
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                found.setdefault(frozenset(back), (importer, *back))
    return list(found.values())


def outside_surface(graph: grimp.ImportGraph) -> list[str]:
    """jobbench's imports of fake_queue modules that are not its surface, and the surface's
    direct modules' imports of anything but the standard library."""
    problems = []
    for module in sorted(m for m in graph.modules if m.split(".")[0] == "jobbench"):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported.split(".")[0] == "fake_queue" and imported not in FAKE_QUEUE_SURFACE:
                problems.append(f"{module} imports {imported}: use {FAKE_QUEUE_API}")
    for module in FAKE_QUEUE_DIRECT:
        if module not in graph.modules:
            problems.append(f"{module} is named as fake_queue's surface but does not exist")
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported.split(".")[0] not in sys.stdlib_module_names:
                problems.append(
                    f"{module} imports {imported}: a module of fake_queue's surface imported "
                    f"directly may import only the standard library (else move it into "
                    f"{FAKE_QUEUE_API})"
                )
    return problems


def reached_modules(source: str) -> list[str]:
    """The module each import statement of a file reaches, wherever it stands: `import a.b` and
    `from a.b import c` reach a.b; from a package that only leads to the surface (`from
    fake_queue import api`, `from fake_queue.queue import scalers`), each name is the module."""
    packages = {m.rsplit(".", i)[0] for m in FAKE_QUEUE_SURFACE for i in range(1, m.count(".") + 1)}
    reached: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            reached.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module in packages:
                reached.extend(f"{node.module}.{alias.name}" for alias in node.names)
            else:
                reached.append(node.module)
    return reached


def benchmark_imports(folder: Path) -> list[str]:
    """benchmarks/'s imports of fake_queue that are not its surface: a benchmark is not in a
    package import-linter sees, so its files are read here."""
    problems = []
    for path in sorted(folder.rglob("*.py")):
        patched = PATCHES_INTERNALS.get(path.name, frozenset())
        for name in reached_modules(path.read_text()):
            if name.split(".")[0] != "fake_queue" or name in FAKE_QUEUE_SURFACE | patched:
                continue
            where = path.relative_to(folder.parent)
            problems.append(f"{where} imports {name}: use {FAKE_QUEUE_API}")
    return problems


def main() -> int:
    graph = grimp.build_graph(
        "jobbench", "fake_queue", include_external_packages=True, cache_dir=None
    )
    problems = [f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(graph)]
    rich = graph.find_modules_that_directly_import("rich") if "rich" in graph.modules else set()
    for module in sorted(rich - RICH_IMPORTERS):
        problems.append(f"{module} imports rich: only {', '.join(sorted(RICH_IMPORTERS))} may")
    for module in STDLIB_ONLY:
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported.split(".")[0] not in sys.stdlib_module_names:
                problems.append(f"{module} imports {imported}: only the standard library may be")
    problems += outside_surface(graph)
    problems += benchmark_imports(BENCHMARKS)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        ours = [m for m in graph.modules if m.split(".")[0] in ("jobbench", "fake_queue")]
        print(
            f"imports: no cycle among {len(ours)} modules; rich only in render/text/terminal; "
            "the SDK side's own modules on the standard library alone; jobbench and benchmarks/ "
            "use fake_queue through its surface"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
