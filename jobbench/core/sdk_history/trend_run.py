"""`jobbench trend`'s runs: every commit of the range that has no saved result for a row on this
machine runs that row, the rest are read from --out (core/sdk_history/commit_results.py).

Neighbours are interleaved: the commits to run go in pairs of neighbours whose reps alternate,
A, B, A, B (the run loop's interleaving, as `compare` runs two sides), so a change between two
neighbours is seen under the same conditions; and the pairs run in a scattered order (by the bit
reversal of their place: first, middle, quarters, ...), so a machine that drifts over the run
spreads its drift over the range as noise instead of laying it along the commits as a step. A
pair is saved as it ends, so an interrupted trend keeps every commit that finished, and a
stopped one (Ctrl-C, `--budget`) has already covered the range coarsely: a re-run fills in.

With `--cluster`, whose CPUs hold the rows of several pairs, that many pairs run at once, each
in a lane of its own (core/run/lanes.py) with its rows side by side: their queues here, each
row's workers on the nodes, a row's two commits in one placement group (never A on one node and
B on another). The pairs share one set of lanes, so a crowded machine turns them all to one pair
of reps at a time, and no rep runs while a row starts its processes. Every commit is checked
out and its workers' environment built before the first pair starts, so no build runs beside a
measurement.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from jobbench.core.real_workers.fake_target import FakeTarget
from jobbench.core.run.lanes import Lanes, lanes_for, run_rows
from jobbench.core.run.loop import run_plans
from jobbench.core.run.target_seam import Plan, Progress
from jobbench.core.sdk_history.commit_results import CommitStore, Machine
from jobbench.core.sdk_history.setup import Setup
from jobbench.errors import Interrupted, RunFailed, UsageError
from jobbench.results.model import ScenarioResult
from jobbench.results.trend import Commit, CommitState


@dataclass
class TrendRun:
    """Every commit's rows by name (what it measured, now or before) and its state."""

    commits: list[Commit]
    rows: list[dict[str, ScenarioResult]]
    states: list[CommitState]
    ran: int = 0  # commits run by this call
    reused: int = 0  # commits whose every row was saved already
    stopped: str | None = None  # why not every commit ran: the budget


@dataclass
class _Clock:
    """How long the commits take, for the estimate and the budget."""

    budget_s: float
    now: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    done: int = 0

    def __post_init__(self) -> None:
        self.started = self.now()

    @property
    def elapsed(self) -> float:
        return self.now() - self.started

    def per_commit(self, elapsed: float) -> float | None:
        return elapsed / self.done if self.done else None

    def stop_before(self, commits: int) -> bool:
        """At --budget no new commit starts: none once it is spent, nor a pair whose estimate
        would end past it."""
        elapsed = self.elapsed
        per = self.per_commit(elapsed)
        return elapsed >= self.budget_s or (
            per is not None and elapsed + per * commits > self.budget_s
        )


def run_trend(
    setup: Setup,
    commits: list[Commit],
    progress: Progress,
    budget_s: float,
    target: FakeTarget | None = None,
    now: Callable[[], float] = time.monotonic,
) -> TrendRun:
    """Every commit without a saved result runs, pairs of neighbours in a scattered order, on
    `target` (default: workers on this machine). On a cluster with room for more than one
    pair's rows, several pairs run at once (`pairs_at_once`)."""
    store = CommitStore.scan(setup.out, Machine.here())
    trend = TrendRun(commits, [{} for _ in commits], [CommitState() for _ in commits])
    missing = [_reuse(store, setup, trend, index) for index in range(len(commits))]
    todo = [index for index, names in enumerate(missing) if names]
    trend.reused = len(commits) - len(todo)
    progress.message(
        f"{len(commits)} commits: {trend.reused} measured before on this machine (reused), "
        f"{len(todo)} to run, {setup.reps} reps a row"
    )
    windows = neighbour_pairs(todo, missing)
    order = [windows[place] for place in scattered(len(windows))]
    target = target or FakeTarget(pin_queue=setup.pin_queue)
    pass_ = _Pass(setup, commits, missing, progress, trend, _Clock(budget_s, now))
    at_once = pairs_at_once(target, setup, len(order))
    if at_once < 2:
        for window in order:
            if not pass_.measure(window, setup.lanes, target):
                break
    else:
        rows = len(setup.suite.scenarios)
        progress.message(
            f"{at_once} pairs of commits at once ({at_once * rows} lanes), their workers on "
            f"the cluster at {target.placed_on}"
        )
        # Each pair's rows a lane of their own (FakeSession.lane_scope). Every commit made
        # ready first: git and the SDK builds never run beside a measurement.
        scoped = [replace(target, lane_scope=f"pair {place}: ") for place in range(len(order))]
        prepared = [pass_.prepare(window, scoped[p]) for p, window in enumerate(order)]
        shared = Lanes(at_once * rows, progress)

        def pair(p: int) -> None:
            pass_.measure(order[p], shared, scoped[p], prepared[p])

        run_rows(len(order), pair, Lanes(at_once))
    if pass_.out_of_budget:
        left = len(todo) - trend.ran
        trend.stopped = f"--budget {budget_s / 60:g} min spent: {left} commits not run"
    return trend


def pairs_at_once(target: FakeTarget, setup: Setup, pairs: int) -> int:
    """How many pairs of neighbours run at once: one on this machine (a trend's pairs follow
    one another, their rows in lanes); on a cluster as many as its CPUs hold every row of, as
    far as --lanes allows (a number: the lanes of every pair together)."""
    if target.placed_on is None or pairs < 2:
        return 1
    rows = setup.suite.scenarios
    room = target.lanes_room(list(rows) * pairs)  # rows of that many pairs the CPUs hold
    lanes = lanes_for(setup.lanes, len(rows) * pairs, room)
    return max(1, min(pairs, lanes // len(rows)))


_Prepared = tuple[list[tuple[int, Plan]], dict[int, tuple[dict[str, ScenarioResult], CommitState]]]


@dataclass
class _Pass:
    """One pass over the pairs to run: what each pair needs, and what they share (the trend, the
    clock), guarded for pairs that run at once."""

    setup: Setup
    commits: list[Commit]
    missing: Sequence[frozenset[str]]
    progress: Progress
    trend: TrendRun
    clock: _Clock
    out_of_budget: bool = False
    begun: int = 0  # commits started, for the progress line's count
    lock: threading.Lock = field(default_factory=threading.Lock)

    def prepare(self, window: list[int], target: FakeTarget) -> _Prepared:
        return _prepare(self.setup, self.commits, window, self.missing, target, self.progress)

    def measure(
        self,
        window: list[int],
        lanes: int | str | Lanes,
        target: FakeTarget,
        prepared: _Prepared | None = None,
    ) -> bool:
        """The pair run and recorded; False when --budget let it not start."""
        with self.lock:
            if self.out_of_budget or self.clock.stop_before(len(window)):
                self.out_of_budget = True
                return False
            self.progress.message(_line(self.commits, window, self.clock, self.begun, self._todo))
            self.begun += len(window)
        ran = _run_window(
            self.setup, self.commits, window, self.missing, target, self.progress, lanes, prepared
        )
        with self.lock:
            for index, (entries, state) in zip(window, ran):
                self.trend.rows[index].update(entries)
                self.trend.states[index] = state
            self.clock.done += len(window)
            self.trend.ran += len(window)
        return True

    @property
    def _todo(self) -> int:
        return sum(1 for names in self.missing if names)


def _reuse(store: CommitStore, setup: Setup, trend: TrendRun, index: int) -> frozenset[str]:
    """The commit's rows saved before, taken; the names of those it must run."""
    commit, missing = trend.commits[index], set()
    for scenario in setup.planned():
        saved = store.find(commit.sha, scenario, setup.reps)
        if saved is None:
            missing.add(scenario.name)
            continue
        trend.rows[index][scenario.name] = saved.entry
        if trend.states[index].label is None:
            trend.states[index] = CommitState(label=saved.doc.label)
    return frozenset(missing)


def neighbour_pairs(todo: Sequence[int], missing: Sequence[frozenset[str]]) -> list[list[int]]:
    """The commits to run in pairs of neighbours (among those to run) that lack the same rows;
    the odd one out, or one lacking other rows than its neighbour, alone."""
    windows: list[list[int]] = []
    for index in todo:
        last = windows[-1] if windows else None
        if last is not None and len(last) == 1 and missing[last[0]] == missing[index]:
            last.append(index)
        else:
            windows.append([index])
    return windows


def scattered(count: int) -> list[int]:
    """0 .. count-1 in bit-reversed order (0, 4, 2, 6, 1, 5, 3, 7 for 8): each next one as far
    from those before as the count allows."""
    bits = max(1, (count - 1).bit_length())
    return sorted(range(count), key=lambda i: int(f"{i:0{bits}b}"[::-1], 2))


def _line(commits: list[Commit], window: list[int], clock: _Clock, begun: int, total: int) -> str:
    names = " and ".join(f"{commits[i].name} {_subject(commits[i])}" for i in window)
    left = total - begun
    per = clock.per_commit(clock.elapsed)
    eta = f", about {_minutes(per * left)} left" if per is not None else ""
    first, last = begun + 1, begun + len(window)
    counted = f"commit {first}" if first == last else f"commits {first}-{last}"
    return f"{counted} of {total}: {names} ({left} left{eta})"


def _subject(commit: Commit) -> str:
    text = commit.subject if len(commit.subject) <= 50 else commit.subject[:49] + "\u2026"
    return repr(text)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def _prepare(
    setup: Setup,
    commits: list[Commit],
    window: list[int],
    missing: Sequence[frozenset[str]],
    target: FakeTarget,
    progress: Progress,
) -> _Prepared:
    """Each commit's plan, its checkout and workers' environment ready; a commit that cannot be
    built is skipped (its outcome), as `git bisect skip` does."""
    outcome: dict[int, tuple[dict[str, ScenarioResult], CommitState]] = {}
    plans: list[tuple[int, Plan]] = []
    for index in window:
        try:
            plan = setup.plan(commits[index], target, missing[index])
            target.preflight(plan.config.scenarios, progress)
            plans.append((index, plan))
        except UsageError as exc:
            outcome[index] = _skipped(commits[index], str(exc), progress)
    return plans, outcome


def _run_window(
    setup: Setup,
    commits: list[Commit],
    window: list[int],
    missing: Sequence[frozenset[str]],
    target: FakeTarget,
    progress: Progress,
    lanes: int | str | Lanes,
    prepared: _Prepared | None = None,
) -> list[tuple[dict[str, ScenarioResult], CommitState]]:
    """Each commit of the window: the rows it ran, and its label (or why it was skipped). A
    commit that cannot be built or whose workers cannot start is skipped; its neighbour still
    runs."""
    plans, outcome = prepared or _prepare(setup, commits, window, missing, target, progress)
    if plans:
        try:
            docs = run_plans([plan for _, plan in plans], progress, lanes=lanes)
        except Interrupted:
            raise
        except RunFailed as exc:
            if len(plans) == 1:
                outcome[plans[0][0]] = _skipped(commits[plans[0][0]], str(exc), progress)
            else:  # which of the two could not start: each alone tells
                for index, _ in plans:
                    outcome[index] = _run_window(
                        setup, commits, [index], missing, target, progress, lanes
                    )[0]
            plans = []
            docs = []
        for (index, plan), doc in zip(plans, docs):
            entries = {entry.name: entry for entry in doc.scenarios}
            outcome[index] = (entries, CommitState(label=plan.config.label))
    return [outcome[index] for index in window]


def _skipped(
    commit: Commit, why: str, progress: Progress
) -> tuple[dict[str, ScenarioResult], CommitState]:
    progress.message(f"{commit.name}: skipped, it cannot run: {why}")
    return {}, CommitState(skipped=why)
