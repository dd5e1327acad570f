"""SDK history without processes: change points over commits (the L1 Potts model with a
penalty from the row's noise, then the gate's figures), the trend document, the interleaving
order, and the bisection's search and its ends."""

from __future__ import annotations

import io
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

# asv's package runs `uname -p` when first imported (its machine defaults): imported here, at
# collection, since a unit test may start no process.
import asv.step_detect  # noqa: F401
import pytest

from jobbench.core.sdk_history.bisect_search import Search, run_bisect
from jobbench.core.sdk_history.commit_results import checkout_commit, worker_identity
from jobbench.core.sdk_history.step import SKIP, Step
from jobbench.core.sdk_history.trend_run import _Clock, neighbour_pairs, scattered
from jobbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_USAGE
from jobbench.measure.stats import median_interval
from jobbench.render.text.trend_text import render_points
from jobbench.results.model import Params, ScenarioResult
from jobbench.verdict.change_points import (
    Commit,
    CommitState,
    Point,
    Series,
    change_points,
    document,
    settled,
)
from tests.unit.cli import run_cli

TREE = "/root/.cache/jobbench/worktrees/0123456789ab/" + "a" * 40


def series(levels: list[float], noise: float = 0.01, reps: int = 3, seed: int = 1) -> Series:
    rng = random.Random(seed)
    points = tuple(
        Point(i, tuple(level * (1 + rng.gauss(0, noise)) for _ in range(reps)))
        for i, level in enumerate(levels)
    )
    return Series("row", "time_to_p99_s", points)


def commits(count: int) -> list[Commit]:
    """Commit i's sha starts with i in hex (its short name tells them apart)."""
    return [
        Commit(f"{i:012x}".ljust(40, "f"), f"commit {i}", "v0" if i == 0 else None)
        for i in range(count)
    ]


def test_a_slowdown_and_its_fix_are_two_change_points() -> None:
    found = change_points(series([1.0] * 4 + [1.5] * 3 + [1.0] * 3), threshold=0.05)
    assert [(p.index, p.direction) for p in found] == [(4, "slower"), (7, "faster")]
    slower = found[0]
    assert slower.before == pytest.approx(1.0, rel=0.03)
    assert slower.after == pytest.approx(1.5, rel=0.03)
    assert slower.change == pytest.approx(0.5, rel=0.1)
    low, high = slower.change_ci
    assert low < slower.change < high
    assert slower.before_ci[0] <= slower.before <= slower.before_ci[1]


@pytest.mark.parametrize("seed", range(5))
def test_noise_alone_has_no_change_point(seed: int) -> None:
    assert change_points(series([1.0] * 16, noise=0.02, seed=seed), threshold=0.05) == []


def test_a_step_within_the_threshold_is_not_a_change_point() -> None:
    steady = series([1.0] * 8 + [1.03] * 8, noise=0.002)
    assert change_points(steady, threshold=0.05) == []


def test_too_few_commits_for_a_change_point() -> None:
    assert change_points(series([1.0, 1.0, 2.0]), threshold=0.05) == []


def test_a_dropped_cut_does_not_bound_its_neighbours() -> None:
    # A slowdown at 4, a wobble of 2 % at 6 (within the threshold: dropped) and the fix at 10:
    # the slowdown's after and the fix's before are every commit from 4 to 9, not split at 6.
    row = series([1.0] * 4 + [1.5] * 2 + [1.53] * 4 + [1.0] * 4, noise=0.001)
    found = settled(row, [4, 6, 10], threshold=0.05)
    assert [(p.index, p.direction) for p in found] == [(4, "slower"), (10, "faster")]
    slower, faster = found
    assert slower.after == pytest.approx(1.53, rel=0.003)  # 12 reps at 1.53, 6 at 1.5
    assert faster.before == slower.after and faster.before_ci == slower.after_ci
    assert faster.change == pytest.approx(1 / 1.53 - 1, rel=0.03)


def test_a_step_within_the_threshold_between_two_is_measured_away() -> None:
    # The 2 % step at 7 is a level of its own to the step detection (20 times the noise), and
    # within the threshold: the slowdown's after is every rep from 4 to 9.
    row = series([1.0] * 4 + [1.5] * 3 + [1.53] * 3 + [1.0] * 4, noise=0.001)
    found = change_points(row, threshold=0.05)
    assert [(p.index, p.direction) for p in found] == [(4, "slower"), (10, "faster")]
    assert found[0].after_ci[0] < 1.5 * 1.01 and found[0].after_ci[1] > 1.53 * 0.99
    assert found[0].after == found[1].before


# Real reps of the default suite's 1 x 512 row (time to 99 %, s; runpod 1.12.0, quiet and
# beside a busy core: benchmarks/data/gate-pools-runpod.json), one a commit.
DEEP_REPS = (23.1564, 23.1764, 23.1382, 23.1505, 23.1406, 23.1451, 23.2091, 23.105, 23.1872,
             23.2213)  # fmt: skip


def real_row(levels: list[float]) -> Series:
    """Commit i's one rep: a real rep of the row (in turn) times levels[i]."""
    points = tuple(
        Point(i, (DEEP_REPS[i % len(DEEP_REPS)] * level,)) for i, level in enumerate(levels)
    )
    return Series("1w-512j-0.5s", "time_to_p99_s", points)


@pytest.mark.parametrize(
    ("levels", "steps"),
    [
        ([1.0] * 9 + [1.1], [(9, "slower")]),  # the range's last commit
        ([1.0] + [0.2] * 9, [(1, "faster")]),  # after its first
        ([1.0] * 4 + [5.0] * 2 + [1.0] * 4, [(4, "slower"), (6, "faster")]),
        ([1.0] * 4 + [1.25, 1.5625, 1.5625, 1.25] + [1.25] * 2, [(4, "slower"), (5, "slower"),
                                                                 (7, "faster")]),
    ],
)  # fmt: skip
def test_every_step_far_outside_the_noise_is_marked_whatever_its_neighbours(
    levels: list[float], steps: list[tuple[int, str]]
) -> None:
    found = change_points(real_row(levels), threshold=0.05)
    assert [(p.index, p.direction) for p in found] == steps
    for point in found:
        assert point.noise_multiple > 20  # the row's reps are within 0.3 % of each other


@pytest.mark.parametrize("seed", range(5))
def test_three_close_steps_are_each_marked(seed: int) -> None:
    # +25 %, +25 % the next commit, -20 % two after, the last at the range's end: a level of
    # one commit between the first two and of two between the last two.
    row = series([1.0] * 6 + [1.25, 1.5625, 1.5625, 1.25], noise=0.01, seed=seed)
    found = change_points(row, threshold=0.05)
    assert [(p.index, p.direction) for p in found] == [(6, "slower"), (7, "slower"),
                                                       (9, "faster")]  # fmt: skip


@pytest.mark.parametrize("seed", range(5))
def test_a_step_at_the_last_commit_is_marked(seed: int) -> None:
    # +10 % (10 times the noise, 3 reps a commit) three commits from the end, then +10 % again
    # at the last.
    row = series([1.0] * 6 + [1.1] * 3 + [1.21], noise=0.01, seed=seed)
    found = change_points(row, threshold=0.05)
    assert [(p.index, p.direction) for p in found] == [(6, "slower"), (9, "slower")]


@pytest.mark.parametrize(
    ("levels", "steps"),
    [
        ([1.0] * 9 + [1.25], [(9, "slower")]),
        ([1.25] + [1.0] * 9, [(1, "faster")]),
        ([1.0] * 4 + [1.25] * 2 + [1.0] * 4, [(4, "slower"), (6, "faster")]),
        ([1.0] * 6 + [1.25, 1.5625, 1.5625, 1.25], [(6, "slower"), (7, "slower"),
                                                    (9, "faster")]),
    ],
)  # fmt: skip
@pytest.mark.parametrize("seed", range(5))
def test_a_25_percent_step_at_one_rep_is_marked_among_1_percent_noise(
    levels: list[float], steps: list[tuple[int, str]], seed: int
) -> None:
    found = change_points(series(levels, noise=0.01, reps=1, seed=seed), threshold=0.05)
    assert [(p.index, p.direction) for p in found] == steps


def heavy_tailed(seed: int, draw: str, reps: int = 3, count: int = 10) -> Series:
    """`count` commits at one level, each rep times exp(x): x is 3 % times Student's t with 2
    degrees of freedom (no finite variance: beyond 10 times that in 1 % of reps), or 1 % times
    a normal draw that one rep in five takes six times as wide."""
    rng = random.Random(seed)

    def student() -> float:
        chi2 = rng.gauss(0, 1) ** 2 + rng.gauss(0, 1) ** 2
        return 0.03 * rng.gauss(0, 1) / math.sqrt(chi2 / 2)

    def contaminated() -> float:
        return 0.01 * rng.gauss(0, 1) * (6 if rng.random() < 0.2 else 1)

    noise = student if draw == "student" else contaminated
    points = tuple(Point(i, tuple(math.exp(noise()) for _ in range(reps))) for i in range(count))
    return Series("row", "time_to_p99_s", points)


@pytest.mark.parametrize("draw", ["student", "contaminated"])
def test_heavy_tailed_noise_alone_has_no_change_point(draw: str) -> None:
    # The penalty is priced from the reps' robust spread, and a commit whose reps disagree
    # counts for less: two wide draws of a commit's three move its median as a step would.
    marked = [
        seed for seed in range(200) if change_points(heavy_tailed(seed, draw), threshold=0.05)
    ]
    assert marked == []


def test_real_reps_at_one_level_have_no_change_point() -> None:
    assert change_points(real_row([1.0] * 30), threshold=0.05) == []


def test_the_table_says_how_far_outside_the_noise_a_change_is() -> None:
    found = change_points(real_row([1.0] * 5 + [1.1] * 5), threshold=0.05)
    out = io.StringIO()
    render_points(commits(10), found, "10 commits", out)
    (line,) = [line for line in out.getvalue().splitlines() if line.startswith("0000")]
    assert line.endswith(f"slower  {found[0].noise_multiple:.0f} x noise")
    assert found[0].noise_multiple > 20


def test_the_document_is_commits_then_change_points() -> None:
    row = series([1.0] * 4 + [1.5] * 4)
    found = change_points(row, threshold=0.05)
    shown = commits(8)
    doc = document(shown, [CommitState(label=f"sdk-{c.short}") for c in shown], [row], found)
    assert list(doc) == ["commits", "change_points"]
    assert doc["commits"][0]["commit"] == shown[0].sha and doc["commits"][0]["ref"] == "v0"
    assert doc["commits"][3]["rows"]["row"]["n"] == 3
    (point,) = doc["change_points"]
    assert list(point) == [
        "commit", "ref", "scenario", "metric", "before", "after", "change", "direction"
    ]  # fmt: skip
    assert point["commit"] == shown[4].sha and point["ref"] is None
    assert point["direction"] == "slower"


def test_median_interval_covers_95_percent() -> None:
    assert median_interval(range(1, 11)) == (2.0, 9.0)  # binomial: 97.9 %
    assert median_interval(range(100)) == (39.0, 60.0)
    assert median_interval([1.0, 2.0, 3.0, 4.0, 5.0]) == (1.0, 5.0)  # too few: the range
    assert median_interval([7.0]) == (7.0, 7.0)


def test_pairs_run_in_a_scattered_order() -> None:
    assert scattered(8) == [0, 4, 2, 6, 1, 5, 3, 7]
    assert sorted(scattered(11)) == list(range(11))
    assert scattered(1) == [0]


def test_neighbours_pair_up_when_they_lack_the_same_rows() -> None:
    both, one = frozenset({"a", "b"}), frozenset({"a"})
    missing = [both, both, both, one, both, frozenset()]
    assert neighbour_pairs([0, 1, 2, 3, 4], missing) == [[0, 1], [2], [3], [4]]


def test_a_result_names_the_commit_its_workers_ran() -> None:
    runpod = entry("runpod", sdk=f"{TREE}/runpod")
    command = entry(f"/usr/bin/python {TREE}/worker.py --fast")
    assert checkout_commit(runpod) == "a" * 40
    assert checkout_commit(command) == "a" * 40
    assert checkout_commit(entry("runpod", sdk="/usr/lib/python3/site-packages/runpod")) is None
    # the same command at any commit is the same worker
    plain = entry("/usr/bin/python worker.py --fast").params
    assert worker_identity(command.params) == worker_identity(plain)


def entry(worker: str, sdk: str | None = None) -> ScenarioResult:
    params = {"workers": 1, "slots": 8, "burst": 16, "job_seconds": 0.02, "take_ahead": 0}
    params |= {"worker": worker, "policy": None, "latency": None}
    return ScenarioResult.model_validate(
        {
            "name": "row",
            "params": Params.model_validate(params).model_dump(),
            "ideal_s": None,
            "worker": worker,
            "sdk": None if sdk is None else {"version": None, "path": sdk, "take_ahead": False},
            "reps": [],
            "summary": {},
        }
    )


def test_the_search_halves_the_range_and_steps_around_a_skip() -> None:
    search = Search(17)  # GOOD, 16 commits, BAD last
    assert search.next() == 8
    search.record(8, SKIP)
    assert search.next() == 7  # the nearest to the middle, the earlier of two
    search.record(7, "pass")
    assert search.next() == 11
    search.record(11, "regression")
    search.record(search.next() or 0, "pass")  # 9
    search.record(search.next() or 0, "pass")  # 10
    assert search.next() is None and search.found == 11


@dataclass
class FakeStepper:
    """A stepper whose commits from `first_bad` on are slower; some skipped, some unsettled."""

    first_bad: int
    skip: frozenset[int] = frozenset()
    unsettled: frozenset[int] = frozenset()
    taken: list[int] = field(default_factory=list)

    def ready_good(self) -> None:
        pass

    def step(self, commit: Commit, budget_s: float) -> Step:
        index = int(commit.sha[:12], 16)
        self.taken.append(index)
        if index in self.skip:
            return Step(commit, SKIP, reason="it does not build")
        if index in self.unsettled:
            return Step(commit, "inconclusive")
        slower = index >= self.first_bad
        return Step(
            commit, "regression" if slower else "pass", 0.5 if slower else 0.0, (0.4, 0.6), "row"
        )

    def doc_of(self, commit: Commit) -> None:
        return None


def bisect(stepper: FakeStepper, count: int = 17, budget_s: float = 3600.0):  # type: ignore[no-untyped-def]
    return run_bisect(stepper, commits(count), budget_s, lambda _: None)  # type: ignore[arg-type]


@pytest.mark.parametrize("first_bad", range(1, 17))
def test_bisect_finds_any_first_bad_commit_of_16_in_5_steps(first_bad: int) -> None:
    found = bisect(FakeStepper(first_bad))
    assert found.code == EXIT_OK and found.first_bad is not None
    assert int(found.first_bad.sha[:12], 16) == first_bad
    assert len(found.steps) <= 5  # BAD's, then log2(16)
    assert found.steps[0].commit.sha == commits(17)[16].sha  # BAD first
    assert found.change == 0.5 and found.ci == (0.4, 0.6)


def test_bisect_when_bad_is_not_slower_is_bad_input() -> None:
    found = bisect(FakeStepper(first_bad=99))
    assert found.code == EXIT_USAGE and "is not slower than GOOD" in found.message
    assert len(found.steps) == 1


def test_an_unsettled_step_ends_the_search_naming_the_range_left() -> None:
    found = bisect(FakeStepper(first_bad=11, unsettled=frozenset({12})))
    assert found.code == EXIT_INCONCLUSIVE and found.first_bad is None
    assert "stayed unsettled" in found.message
    shown = commits(17)
    assert f"in {shown[9].short}..{shown[16].short}" in found.message  # 8 good, 12 open
    assert "a re-run reuses the" in found.message


def test_only_skipped_commits_left_is_unsettled() -> None:
    found = bisect(FakeStepper(first_bad=3, skip=frozenset({1, 2})), count=5)
    assert found.code == EXIT_INCONCLUSIVE
    assert "only skipped commits are left" in found.message


def test_a_spent_budget_ends_the_search() -> None:
    clock = iter(range(0, 3000, 30))  # every look at the clock 30 s later
    found = run_bisect(
        FakeStepper(first_bad=5),  # type: ignore[arg-type]
        commits(17),
        50.0,
        lambda _: None,
        now=lambda: float(next(clock)),
    )
    assert found.code == EXIT_INCONCLUSIVE and "--budget spent after 1 steps" in found.message


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("trend", "v1..v2"), "--repo: give the SDK checkout whose commits to run"),
        (("trend", "v1..v2", "--suite", "seed", "--burst", "8"), "--suite seed and --burst"),
        (("bisect", "v1", "v2", "--worker", "model"), "--worker model: the model worker"),
        (("bisect", "v1", "v2", "--worker", "python w.py", "-t", "4"), "--take-ahead"),
        (("trend", "v1..v2", "--max-regression", "five"), "--max-regression 'five'"),
        (("trend", "v1..v2", "--metric", "speed"), "--metric speed: use one of"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(
    args: tuple[str, ...],
    said: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli(monkeypatch, *args, cwd=tmp_path) == EXIT_USAGE
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1, err


def test_no_commit_starts_past_the_trend_budget() -> None:
    times = iter([0.0, 0.0, 100.0, 250.0])
    clock = _Clock(300.0, now=lambda: next(times))
    assert not clock.stop_before(2)  # nothing measured yet: the first pair runs
    clock.done = 2  # 2 commits in 100 s: a pair takes about 100 s
    assert not clock.stop_before(2)  # 100 + 100 <= 300
    assert clock.stop_before(2)  # 250 + 100 > 300: it would end past the budget


def test_a_trend_at_one_rep_says_its_noise_comes_from_neighbouring_commits() -> None:
    from jobbench.commands.trend import ONE_REP, method_note

    assert method_note(1, 0.05).endswith(ONE_REP)
    assert "neighbouring" not in method_note(3, 0.05)
    assert "more than 5%" in method_note(3, 0.05)
