"""`jobbench bisect GOOD BAD`: the first commit between GOOD and BAD (on BAD's first-parent line)
whose rows are slower than GOOD's by the gate's rule.

The first step confirms that BAD is slower than GOOD (else there is nothing to find: exit 2).
Then a binary search: each step judges the commit halfway between the last good and the first
slower one known against GOOD (core/sdk_history/step.py), so n commits take about log2(n) steps,
plus the first; a commit that cannot run is skipped and its nearest neighbour taken instead, as `git
bisect skip` does. A step that stays unsettled after `--reps auto` added its reps ends the search
(exit 3) naming the range left, as does `--budget` spent. The first slower commit's change is
against its parent, from the reps of the two steps that judged them (or of its own step, when
the parent is GOOD).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from jobbench.core.sdk_history.step import SKIP, Step, Stepper, change_against
from jobbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_USAGE
from jobbench.results.trend import Commit


@dataclass
class Search:
    """A binary search over commits 0 (GOOD) .. size - 1 (BAD) for the first slower one."""

    size: int
    good: int = 0
    bad: int = -1
    skipped: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.bad < 0:
            self.bad = self.size - 1

    def candidates(self) -> list[int]:
        """The commits between the last good and the first slower one not skipped yet."""
        return [i for i in range(self.good + 1, self.bad) if i not in self.skipped]

    def next(self) -> int | None:
        """The untried commit nearest the middle (the earlier of two), or None: done, or only
        skipped commits are left between."""
        middle = (self.good + self.bad) / 2
        return min(self.candidates(), key=lambda i: (abs(i - middle), i), default=None)

    def record(self, index: int, verdict: str) -> None:
        if verdict == SKIP:
            self.skipped.add(index)
        elif verdict == "regression":
            self.bad = index
        else:
            self.good = index

    @property
    def found(self) -> int | None:
        return self.bad if self.bad == self.good + 1 else None

    def steps_left(self) -> int:
        return math.ceil(math.log2(len(self.candidates()) + 1))


@dataclass
class Bisection:
    commits: list[Commit]
    steps: list[Step] = field(default_factory=list)
    code: int = EXIT_OK
    message: str = ""  # why it ended without a commit, if it did
    first_bad: Commit | None = None
    parent: Commit | None = None
    scenario: str | None = None
    change: float | None = None
    ci: tuple[float, float] | None = None


def run_bisect(
    stepper: Stepper,
    commits: list[Commit],
    budget_s: float,
    say: Callable[[str], None],
    now: Callable[[], float] = time.monotonic,
) -> Bisection:
    """Steps until the first slower commit is known (code 0), or the search cannot go on: BAD
    not slower or not runnable (2), a step unsettled, the budget spent or only skipped commits
    left (3). Ctrl-C propagates: each step taken is saved for the next call."""
    started = now()
    deadline = started + budget_s
    found = Bisection(commits)
    search = Search(len(commits))
    stepper.ready_good()
    index: int | None = search.bad  # BAD first: it must be slower than GOOD
    while index is not None:
        left = deadline - now()
        if left <= 0:
            return _ends(
                found, search, EXIT_INCONCLUSIVE, f"--budget spent after {len(found.steps)} steps"
            )
        guess = 1 + search.steps_left()
        eta = _eta(found, now() - started, guess)
        commit = commits[index]
        say(
            f"step {len(found.steps) + 1} (about {guess} to go{eta}): {commit.name} "
            f"{commit.subject!r} against GOOD {commits[0].name}; "
            f"{len(search.candidates()) + 1} commits left to search"
        )
        step = stepper.step(commits[index], left / guess)
        found.steps.append(step)
        say(_said(step))
        if index == len(commits) - 1 and not found.steps[:-1]:
            problem = _bad_problem(step, commits)
            if problem is not None:
                return _ends(
                    found,
                    search,
                    EXIT_USAGE if step.verdict != "inconclusive" else EXIT_INCONCLUSIVE,
                    problem,
                )
        elif step.verdict == "inconclusive":
            return _ends(found, search, EXIT_INCONCLUSIVE, f"{step.commit.name} stayed unsettled")
        search.record(index, step.verdict)
        index = search.next()
    first = search.found
    if first is None:
        skipped = ", ".join(commits[i].name for i in sorted(search.skipped))
        return _ends(found, search, EXIT_INCONCLUSIVE, f"only skipped commits are left ({skipped})")
    _conclude(found, stepper, commits, first)
    return found


def _eta(found: Bisection, elapsed: float, steps: int) -> str:
    """`, about 4 min left`: the mean step so far times the steps still expected."""
    if not found.steps:
        return ""
    left = elapsed / len(found.steps) * steps
    return f", about {left / 60:.0f} min left" if left >= 90 else f", about {left:.0f} s left"


def _bad_problem(step: Step, commits: list[Commit]) -> str | None:
    """Why BAD's step leaves nothing to search (None: BAD is slower, go on)."""
    good, bad = commits[0].name, commits[-1].name
    if step.verdict == SKIP:
        return f"BAD {bad} cannot run ({step.reason}); give a BAD that builds"
    if step.verdict == "inconclusive":
        return f"BAD {bad} against GOOD {good} stayed unsettled"
    if step.verdict != "regression":
        change = "" if step.change is None else f", {step.change:+.1%}"
        return (
            f"BAD {bad} is not slower than GOOD {good} by the gate's rule ({step.verdict}"
            f"{change}); nothing to search: give a BAD that is, or another --metric"
        )
    return None


def _ends(found: Bisection, search: Search, code: int, why: str) -> Bisection:
    """The search stops here: what is left is the first slower commit's range."""
    commits = found.commits
    low, high = search.good + 1, search.bad
    span = commits[low].name if low == high else f"{commits[low].name}..{commits[high].name}"
    count = high - low + 1
    found.code = code
    if code == EXIT_USAGE:
        found.message = why
    else:
        found.message = (
            f"{why}; the first slower commit is in {span} ({count} commits, after "
            f"{commits[search.good].name}); a re-run reuses the {len(found.steps)} steps taken"
        )
    return found


def _conclude(found: Bisection, stepper: Stepper, commits: list[Commit], first: int) -> None:
    commit, parent = commits[first], commits[first - 1]
    own = next(step for step in found.steps if step.commit.sha == commit.sha)
    found.first_bad, found.parent, found.scenario = commit, parent, own.scenario
    if first == 1 or own.scenario is None:  # its parent is GOOD: its own step is the change
        found.change, found.ci = own.change, own.ci
        return
    child, before = stepper.doc_of(commit), stepper.doc_of(parent)
    if child is None or before is None:
        found.change, found.ci = own.change, own.ci
        return
    found.change, found.ci = change_against(
        before, child, own.scenario, stepper.metric_for, stepper.gate
    )


def _said(step: Step) -> str:
    if step.verdict == SKIP:
        return f"  {step.commit.name}: skipped, {step.reason}"
    change = "" if step.change is None else f", {step.change:+.1%}"
    row = f" ({step.scenario})" if step.scenario else ""
    source = "" if step.source == "ran" else f" [from {step.source}]"
    return f"  {step.commit.name}: {step.verdict}{change}{row}{source}"
