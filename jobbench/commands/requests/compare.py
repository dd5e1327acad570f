"""`jobbench compare` and `jobbench gate`: one request, CompareRequest; the gate's flags are
GateRequest's, a comparison that always fails on a regression."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

from jobbench.commands.requests.flag import argument, flag, group, option, path
from jobbench.commands.requests.shared import (
    BUDGET,
    LANES,
    MAX_REGRESSION,
    MAX_REPS,
    METRIC,
    OUT,
    PIN_QUEUE,
    QUIET,
    ClusterRequest,
    read_percent,
)
from jobbench.core.run.settle import AUTO, parse_reps
from jobbench.errors import UsageError
from jobbench.render import FORMATS

if TYPE_CHECKING:
    from jobbench.results.gate import GateConfig


def read_format(text: str) -> str:
    if text not in FORMATS:
        raise UsageError(f"--format {text}: use one of {', '.join(FORMATS)}")
    return text


def read_target(text: str) -> str:
    if text not in ("fake", "sim"):
        raise UsageError(f"--target {text!r}: use fake or sim")
    return text


BASELINE = argument("BASELINE", "result file, saved label, variant or git ref")
CANDIDATE = argument("CANDIDATE", "the same kinds of name as BASELINE")
MAX_COST_REGRESSION = option(
    "--max-cost-regression",
    metavar="PCT",
    read=read_percent("--max-cost-regression"),
    help="also judge autoscaled rows on their cost (worker-seconds): this much more passes",
    default=None,
)
WIDE = option("--wide", help="table: every metric, not only the gated one", default=False)
REPO = option(
    "--repo",
    metavar="PATH",
    read=path,
    help="SDK checkout whose git refs are names",
    default=None,
)
FORMAT = option(
    "--format",
    metavar="FORMAT",
    read=read_format,
    help="table | markdown | json | csv | bmf | github-action-benchmark (B's figures)",
    default="table",
)
BASELINE_NAME = option(
    "--baseline-name",
    metavar="TEXT",
    help="how the comment names A, e.g. 'base abc1234 (merge base)'",
    default=None,
)
CANDIDATE_NAME = option(
    "--candidate-name",
    metavar="TEXT",
    help="how the comment names B, e.g. 'head def5678'",
    default=None,
)
TARGET = option(
    "--target",
    metavar="fake|sim",
    read=read_target,
    help="sides that run now: fake queue and workers, or simulated",
    default="fake",
)


@dataclass(frozen=True)
class CompareRequest:
    """`jobbench compare`'s flags, in the order its help lists them."""

    baseline: str = BASELINE()
    candidate: str = CANDIDATE()
    suite: str | None = flag(
        None, "--suite", metavar="SUITE", help="suite of scenarios (default gate: seed + trickle)"
    )
    # None: the suite's, or auto with --fail-on-regression; "auto": settle
    reps: int | str | None = flag(
        None,
        "--reps",
        "-n",
        metavar="N|auto",
        read=parse_reps,
        help="reps a side: N, or auto (settle unsettled rows)",
    )
    max_reps: int = MAX_REPS()
    budget_s: float = BUDGET()
    lanes: int | str = LANES()  # rows side by side (core/run/lanes.py)
    fmt: str = FORMAT()
    wide: bool = WIDE()
    out: Path = OUT()
    repo: Path | None = REPO()
    rerun: bool = flag(False, "--rerun", help="run variants even if a saved label exists")
    metric: str | None = METRIC()
    max_regression: float = MAX_REGRESSION()  # a fraction: 0.05 = 5 % slower still passes
    max_cost_regression: float | None = MAX_COST_REGRESSION()
    fail_on_regression: bool = flag(
        False, "--fail-on-regression", help="exit 1 / 3 like jobbench gate"
    )
    markdown_file: Path | None = flag(
        None, "--markdown", metavar="FILE", read=path, help="also write a PR-comment body here"
    )
    baseline_name: str | None = BASELINE_NAME()  # how the comment names A and B
    candidate_name: str | None = CANDIDATE_NAME()
    quiet: bool = QUIET()
    html: Path | None = flag(
        None,
        "--html",
        metavar="FILE",
        read=path,
        help="also write the HTML report (A and B plots)",
    )
    pin_queue: bool = PIN_QUEUE()
    target: str = TARGET()  # where sides that run now run: fake | sim (core/sim/target.py)
    cluster: ClusterRequest = group(ClusterRequest)
    folder: Path = field(default=Path("."))  # where jobbench.toml is looked for

    def __post_init__(self) -> None:
        if self.reps is None and self.fail_on_regression:  # as the gate does
            object.__setattr__(self, "reps", AUTO)

    @property
    def gate(self) -> GateConfig:
        from jobbench.results.gate import GateConfig

        return GateConfig(self.metric, self.max_regression, self.max_cost_regression)

    @property
    def names(self) -> tuple[str | None, str | None]:
        return self.baseline_name, self.candidate_name


@dataclass(frozen=True)
class GateRequest:
    """`jobbench gate`'s flags, in the order its help lists them: compare's, less --rerun,
    --html and --no-pin-queue, with --reps auto by default."""

    baseline: str = BASELINE()
    candidate: str = CANDIDATE()
    metric: str | None = METRIC()
    max_regression: float = MAX_REGRESSION()
    max_cost_regression: float | None = MAX_COST_REGRESSION()
    suite: str | None = flag(
        None, "--suite", metavar="SUITE", help="suite, when a side runs now (default gate)"
    )
    reps: int | str = flag(
        AUTO,
        "--reps",
        "-n",
        metavar="N|auto",
        read=parse_reps,
        help="reps a side: auto (settle unsettled rows) or N",
    )
    max_reps: int = MAX_REPS()
    budget_s: float = BUDGET()
    lanes: int | str = LANES()
    wide: bool = WIDE()
    out: Path = OUT()
    repo: Path | None = REPO()
    markdown_file: Path | None = flag(
        None, "--markdown", metavar="FILE", read=path, help="write a PR-comment body here"
    )
    baseline_name: str | None = BASELINE_NAME()
    candidate_name: str | None = CANDIDATE_NAME()
    fmt: str = FORMAT()
    quiet: bool = QUIET()
    target: str = TARGET()
    cluster: ClusterRequest = group(ClusterRequest)

    def comparison(self) -> CompareRequest:
        given = {each.name: getattr(self, each.name) for each in fields(self)}
        return CompareRequest(**given, fail_on_regression=True)
