"""`jobbench bisect GOOD BAD --repo PATH`: the first commit slower than GOOD, found step by step
(core/history/bisect.py), each step printed as it ends; the commit, its subject and its change
against its parent, or JSON. Exit 0 found, 3 unsettled (the range left named), 2 bad input,
130 interrupted (every step taken is saved and reused by the next call)."""

from __future__ import annotations

import json
import sys
from typing import Any

from jobbench.commands.cluster import check_cluster, fake_target, leave_cluster
from jobbench.commands.requests.trend import BisectRequest
from jobbench.core.scenario.checks import REPS, check_count
from jobbench.core.sdk_history.bisect_search import Bisection, run_bisect
from jobbench.core.sdk_history.commit_results import CommitStore, Machine
from jobbench.core.sdk_history.commits import commits_between
from jobbench.core.sdk_history.setup import make_setup
from jobbench.core.sdk_history.step import Stepper
from jobbench.errors import EXIT_USAGE, INTERRUPTED, Interrupted, UsageError
from jobbench.render.text.progress import make_progress
from jobbench.render.words import commit_changes as words


def bisect_command(request: BisectRequest) -> int:
    try:
        return _bisect(request)
    finally:
        leave_cluster()


def _bisect(request: BisectRequest) -> int:
    check_cluster(request.cluster, "fake")
    gate = request.gate.validate()
    setup = make_setup(request.setup)
    check_count(REPS, request.max_reps)
    if request.max_reps < setup.reps:
        raise UsageError(
            f"--max-reps {request.max_reps}: must be at least the first {setup.reps} reps"
        )
    commits = commits_between(setup.repo, request.good, request.bad)
    _, progress = make_progress(request.quiet)
    stepper = Stepper(
        setup,
        commits[0],
        gate,
        request.max_reps,
        CommitStore.scan(setup.out, Machine.here()),
        progress,
        fake_target(request.cluster, pin_queue=setup.pin_queue),
    )
    try:
        found = run_bisect(stepper, commits, request.budget_s, progress.message)
    except (Interrupted, KeyboardInterrupt) as exc:  # a run's, or Ctrl-C between runs
        raise Interrupted(
            f"{exc or INTERRUPTED}; every step taken is saved: the same bisect again reuses them"
        ) from None
    if request.json_out:
        sys.stdout.write(json.dumps(bisect_json(found), indent=1) + "\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in ending(found)))
    if found.code == EXIT_USAGE:
        sys.stderr.write(f"error: {found.message}\n")
    elif found.message:
        sys.stderr.write(f"bisect: {found.message}\n")
    return found.code


def bisect_json(found: Bisection) -> dict[str, Any]:
    """`{"first_bad": {"commit", "subject", "change"} or null, "steps": [{"commit", "verdict",
    "change"}, ...]}`: changes as fractions (0.25: 25 % slower), null where none was measured."""
    first = found.first_bad
    return {
        "first_bad": None
        if first is None
        else {"commit": first.sha, "subject": first.subject, "change": found.change},
        "steps": [
            {"commit": step.commit.sha, "verdict": step.verdict, "change": step.change}
            for step in found.steps
        ],
    }


def ending(found: Bisection) -> list[str]:
    """The last lines: the first slower commit, its subject, its change against its parent."""
    first, parent = found.first_bad, found.parent
    if first is None or parent is None:
        return [f"no first slower commit found after {len(found.steps)} steps"]
    row = f" in {found.scenario}" if found.scenario else ""
    return [
        f"first slower commit: {first.sha} ({first.name}), after {len(found.steps)} steps",
        f"  {first.subject}",
        f"  change against its parent {parent.name}{row}: {words.change(found.change, found.ci)}",
    ]
