"""Fail on any import cycle among jobbench and fake_queue modules, function-level imports included
(grimp's graph has every import statement, wherever it stands), on rich imported outside
jobbench/render/text/terminal.py, and on anything but the standard library imported by the modules
runpod_entry.py imports from beside itself. The contracts import-linter can state are in
pyproject.toml.

    python scripts/check_imports.py
"""

from __future__ import annotations

import sys

import grimp

RICH_IMPORTERS = {"jobbench.render.text.terminal"}
# What runpod_entry.py imports from its own folder, in the SDK's environment, where neither
# jobbench nor its dependencies are installed: each may import the standard library alone.
STDLIB_ONLY = ("jobbench.workers.bench_handler", "jobbench.workers.policies")


def cycles(graph: grimp.ImportGraph) -> list[tuple[str, ...]]:
    """One shortest cycle through each direct import that closes one, each cycle once."""
    found: dict[frozenset[str], tuple[str, ...]] = {}
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                found.setdefault(frozenset(back), (importer, *back))
    return list(found.values())


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
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        ours = [m for m in graph.modules if m.split(".")[0] in ("jobbench", "fake_queue")]
        print(
            f"imports: no cycle among {len(ours)} modules; rich only in render/text/terminal; "
            "the SDK side's own modules on the standard library alone"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
