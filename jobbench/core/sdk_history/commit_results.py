"""Results by commit, scenario and machine, found among the results saved in --out.

Nothing new is written for this: a commit's run is a result like any other, saved under its
commit's label (`<repo folder>-<short sha>`) with its events and numbered history, and `jobbench
history`, `report` and `compare` read it by that name. A result counts for a commit when its
workers ran that commit's checkout, which the result already records: the runpod SDK's path
(`sdk.path`) or the command (`params.worker`) lies in the commit's worktree,
`<cache>/worktrees/<repo key>/<sha>` (core/sdk/gitrefs.py). So what `compare` or `gate` saved of a
git ref of --repo counts as well as what an earlier trend or bisect saved.

The machine is what every result records of it: the platform (kernel, architecture, C library),
the CPU count and the Python version. Results of another kind of machine are never mixed into a
trend; a CI runner of the same kind is the same machine, so a nightly job that keeps --out runs only
the commits that are new.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from jobbench.core.scenario.config import Scenario
from jobbench.errors import ResultsError
from jobbench.results.history import HISTORY
from jobbench.results.model import RESULT_SCHEMA, Environment, Params, Result, ScenarioResult
from jobbench.results.pairing import first_param_difference
from jobbench.results.store import environment, parse_result, safe_label

# A worktree of a commit (gitrefs.worktree_for): the repo's key, then the full sha.
_CHECKOUT = re.compile(r"\S*?/worktrees/[0-9a-f]{12}/(?P<sha>[0-9a-f]{40})/?")


@dataclass(frozen=True)
class Machine:
    platform: str
    cpus: int | None
    python: str

    @classmethod
    def of(cls, env: Environment) -> Machine:
        return cls(env.platform, env.cpus, env.python)

    @classmethod
    def here(cls) -> Machine:
        return cls.of(environment(None))


@dataclass(frozen=True)
class Saved:
    """A scenario's entry in a saved result, and where that result is."""

    entry: ScenarioResult
    doc: Result
    path: Path


def commit_label(repo: Path, sha: str) -> str:
    """The saved label of a commit's runs: `runpod-python-79f6c12c1565`."""
    return safe_label(f"{repo.resolve().name}-{sha[:12]}")


def checkout_commit(entry: ScenarioResult) -> str | None:
    """The commit whose worktree the entry's workers ran, if they ran one."""
    for text in (entry.sdk.path if entry.sdk else None, entry.params.worker):
        match = _CHECKOUT.search(text or "")
        if match is not None:
            return match["sha"]
    return None


def worker_identity(params: Params) -> tuple[str | None, int | None, str | None]:
    """What the worker was, whichever commit it ran: its kind or command with the checkout's
    path left out, its take-ahead and policy."""
    worker = _CHECKOUT.sub("", params.worker or "")
    return worker, params.take_ahead, params.policy


@dataclass
class CommitStore:
    """Every entry saved in `out` for a commit, on this machine, newest first per commit."""

    out: Path
    machine: Machine
    found: dict[str, list[Saved]] = field(default_factory=dict)

    @classmethod
    def scan(cls, out: Path, machine: Machine) -> CommitStore:
        store = cls(out, machine)
        for path in _result_files(out):
            store._read(path)
        for saved in store.found.values():
            saved.sort(key=lambda s: s.doc.created, reverse=True)
        return store

    def _read(self, path: Path) -> None:
        try:
            text = path.read_text()
        except OSError:
            return
        if "/worktrees/" not in text:  # cheap: most results ran no checkout
            return
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("schema") != RESULT_SCHEMA:
                return
            doc = parse_result(data, path)
        except (ValueError, ResultsError):
            return  # an unreadable file is not this command's to judge: `history` names it
        if doc.target.kind != "fake" or Machine.of(doc.environment) != self.machine:
            return
        for entry in doc.scenarios:
            sha = checkout_commit(entry)
            if sha is not None and entry.reps:
                self.found.setdefault(sha, []).append(Saved(entry, doc, path))

    def find(self, sha: str, scenario: Scenario, reps: int) -> Saved | None:
        """The newest entry of `scenario` (its name, parameters and worker, any checkout) run
        by commit `sha` with at least `reps` reps."""
        planned = Params.model_validate(scenario.params())
        for saved in self.found.get(sha, []):
            entry = saved.entry
            if (
                entry.name == scenario.name
                and len(entry.reps) >= reps
                and first_param_difference(entry.params, planned) is None
                and worker_identity(entry.params) == worker_identity(planned)
            ):
                return saved
        return None


def _result_files(out: Path) -> Iterator[Path]:
    yield from sorted(out.glob("*.json"))
    yield from sorted((out / HISTORY).glob("*/*.json"))
