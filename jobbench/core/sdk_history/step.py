"""One step of a bisection: is this commit slower than GOOD? Judged by the gate's own rule
(results/gate.py), GOOD and the commit run now, their reps interleaved and settled as `gate
--reps auto` settles them (core/run/settle.py); the comparison is saved as `compare` saves one,
`<GOOD's label>-vs-<the commit's label>.json`.

Before running, what is saved already: that comparison, judged (a bisection interrupted or run
before took this step), or results of both commits on this machine (an earlier trend, compare
or gate) whose comparison settles. A commit that does not build (its environment, its SDK's
import, its command's script) or whose workers cannot start is skipped, as `git bisect skip`
skips it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jobbench.core.real_workers.fake_target import FakeTarget
from jobbench.core.run.loop import run_plans
from jobbench.core.run.settle import Settler
from jobbench.core.run.target_seam import Progress
from jobbench.core.sdk_history.commit_results import CommitStore, Saved
from jobbench.core.sdk_history.setup import Setup
from jobbench.errors import Interrupted, ResultsError, RunFailed, UsageError
from jobbench.results.compare import compare_docs
from jobbench.results.gate import GateConfig, judge
from jobbench.results.model import Comparison, Params, Result, Row
from jobbench.results.pairing import shared_params
from jobbench.results.store import read_comparison, result_path, save_document
from jobbench.results.trend import Commit

SKIP = "skip"
GOOD_VERDICTS = ("pass", "better")  # the commit is not slower than GOOD
SETTLED = ("regression", *GOOD_VERDICTS)


@dataclass(frozen=True)
class Step:
    commit: Commit
    verdict: str  # regression | pass | better | inconclusive | skip
    change: float | None = None  # of the row the verdict rests on: a regression's, else the largest
    ci: tuple[float, float] | None = None
    scenario: str | None = None
    reason: str = ""
    source: str = "ran"  # or where the verdict was read: a saved comparison, saved results

    @property
    def good(self) -> bool:
        return self.verdict in GOOD_VERDICTS


@dataclass
class Stepper:
    """Takes the steps of one bisection against `good`, keeping each commit's result (the one
    judged) for the change against its parent at the end."""

    setup: Setup
    good: Commit
    gate: GateConfig
    max_reps: int
    store: CommitStore
    progress: Progress
    target: FakeTarget = field(default_factory=FakeTarget)
    docs: dict[str, Result] = field(default_factory=dict)

    def metric_for(self, name: str) -> str | None:
        return self.gate.metric or self.setup.suite.metric_for(name)

    def ready_good(self) -> None:
        """GOOD must run: a commit that cannot is no baseline (exit 2, naming it)."""
        try:
            plan = self.setup.plan(self.good, self.target)
            self.target.preflight(plan.config.scenarios, self.progress)
        except UsageError as exc:
            raise UsageError(f"GOOD {self.good.name} cannot run: {exc}") from None

    def step(self, commit: Commit, budget_s: float) -> Step:
        saved = self._saved_comparison(commit) or self._saved_results(commit)
        if saved is not None:
            return saved
        return self._run(commit, budget_s)

    def _comparison_path(self, commit: Commit) -> Path:
        return self.setup.out / f"{self.setup.label(self.good)}-vs-{self.setup.label(commit)}.json"

    def _saved_comparison(self, commit: Commit) -> Step | None:
        path = self._comparison_path(commit)
        if not path.is_file():
            return None
        try:
            comparison = read_comparison(path)
        except ResultsError:
            return None
        if comparison.verdict not in SETTLED or not self._same_rows(comparison):
            return None
        doc = self.doc_of(commit)
        if doc is not None:
            self.docs[commit.sha] = doc
        return verdict_step(commit, comparison, f"saved comparison {path}")

    def _same_rows(self, comparison: Comparison) -> bool:
        """Judged by this call's rule on this call's rows: names, parameters and metrics."""
        gate = comparison.gate
        if gate is None or gate.max_regression != self.gate.max_regression:
            return False
        planned = {s.name: s for s in self.setup.planned()}
        if {row.scenario for row in comparison.rows} != set(planned):
            return False
        for row in comparison.rows:
            scenario = planned[row.scenario]
            chosen = self.metric_for(row.scenario)
            shared = shared_params(Params.model_validate(scenario.params()))
            if row.params.model_dump() != shared.model_dump() or (chosen and row.gated != chosen):
                return False
        return True

    def doc_of(self, commit: Commit) -> Result | None:
        """The commit's result: the one its step ran, else its newest saved rows."""
        if commit.sha in self.docs:
            return self.docs[commit.sha]
        found = [self.store.find(commit.sha, s, 1) for s in self.setup.planned()]
        if not found or any(saved is None for saved in found):
            return None
        return _joined([saved for saved in found if saved is not None])

    def _saved_results(self, commit: Commit) -> Step | None:
        reps = self.setup.reps
        rows = self.setup.planned()
        if any(self.store.find(c.sha, s, reps) is None for c in (self.good, commit) for s in rows):
            return None
        base, cand = self.doc_of(self.good), self.doc_of(commit)
        if base is None or cand is None:
            return None
        comparison = compare_docs(base, cand, metric_for=self.metric_for, rule=self.gate.rule())
        judge(comparison, self.gate)
        if comparison.verdict not in SETTLED:
            return None  # settling needs reps of both, run together
        self.docs[commit.sha] = cand
        return verdict_step(commit, comparison, "saved results of both commits")

    def _run(self, commit: Commit, budget_s: float) -> Step:
        setup, target = self.setup, self.target
        try:
            plans = [setup.plan(self.good, target), setup.plan(commit, target)]
            target.preflight(plans[1].config.scenarios, self.progress)
        except UsageError as exc:
            return Step(commit, SKIP, reason=f"it does not build: {exc}")
        rows = setup.suite.scenarios
        settle = Settler(
            self.gate,
            self.metric_for,
            rows=len(rows),
            costed=sum(self.gate.judges_cost(s.fleet is not None) for s in rows),
            first_reps=setup.reps,
            messages=self.progress,
            max_reps=self.max_reps,
            budget_s=max(budget_s, 1.0),
        )
        try:
            docs = run_plans(plans, self.progress, settle, candidate=1, lanes=setup.lanes)
        except Interrupted:
            raise
        except RunFailed as exc:
            return Step(commit, SKIP, reason=f"its workers cannot start: {exc}")
        comparison = self._judged(docs, settle)
        self.docs[commit.sha] = docs[1]
        self.docs.setdefault(self.good.sha, docs[0])
        return verdict_step(commit, comparison, "ran")

    def _judged(self, docs: list[Result], settle: Settler) -> Comparison:
        """The step's comparison, judged and saved as `compare` saves one."""
        out = self.setup.out
        paths = [result_path(out, doc.label) for doc in docs]
        comparison = compare_docs(
            docs[0],
            docs[1],
            paths=[os.path.relpath(p, out) for p in paths],
            sources=[str(p) for p in paths],
            metric_for=self.metric_for,
            rule=self.gate.rule(),
        )
        for row in comparison.rows:
            row.stopped = settle.stopped.get(row.scenario, "")
            row.looks = settle.looks.get(row.scenario, 1)
        judge(comparison, self.gate)
        save_document(comparison, out / f"{docs[0].label}-vs-{docs[1].label}.json")
        return comparison


def verdict_step(commit: Commit, comparison: Comparison, source: str) -> Step:
    """The step's verdict (the comparison's: a regression in any row makes the commit slower)
    and the change of the row it rests on."""
    row = deciding_row(comparison.rows)
    metric = row.metrics[row.gated] if row is not None else None
    ci = metric.ci if metric is not None else None
    return Step(
        commit,
        comparison.verdict or "inconclusive",
        change=metric.change if metric is not None else None,
        ci=(ci[0], ci[1]) if ci else None,
        scenario=row.scenario if row is not None else None,
        reason=comparison.reason,
        source=source,
    )


def deciding_row(rows: list[Row]) -> Row | None:
    """A regression's row (the largest such change), else the row with the largest change."""

    def change(row: Row) -> float:
        value = row.metrics[row.gated].change
        return value if value is not None else float("-inf")

    slower = [row for row in rows if row.verdict == "regression"]
    return max(slower or rows, key=change, default=None)


def _joined(found: list[Saved]) -> Result:
    """One result of the commit's rows, each from the newest result holding it."""
    first = found[0].doc
    if all(saved.doc is first for saved in found):
        return first
    return first.model_copy(update={"scenarios": [saved.entry for saved in found]})


def change_against(
    parent: Result,
    child: Result,
    scenario: str,
    metric_for: Callable[[str], str | None],
    gate: GateConfig,
) -> tuple[float | None, tuple[float, float] | None]:
    """The row's change from `parent`'s reps to `child`'s, with its 95 % interval."""
    comparison = compare_docs(parent, child, metric_for=metric_for, rule=gate.rule())
    row = next((r for r in comparison.rows if r.scenario == scenario), None)
    if row is None:
        return None, None
    metric = row.metrics[row.gated]
    return metric.change, (metric.ci[0], metric.ci[1]) if metric.ci else None
