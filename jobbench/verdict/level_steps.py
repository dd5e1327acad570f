"""Where a row's level steps over the commits of a trend (docs/history.md, "The change-point
method"): the L1 Potts model (Friedrich et al., "Complexity Penalized M-Estimation", 2008), the
piecewise constant level nearest the commits' values in absolute distance plus a penalty for
each jump, solved exactly by airspeed velocity's dynamic programme (`asv.step_detect.
solve_potts`), with the penalty set from the row's own noise.

A jump is kept when it saves more distance than the penalty: PENALTY x ln(commits) times the
row's rep-to-rep noise. So a step far outside the noise is found whatever its neighbours: with
a single commit on one side (at the range's end, or between two close steps) it still saves its
whole size. The noise: with two or more reps a commit, the spread within each commit, which no
step inflates; with one, the MAD of neighbouring commits' differences, which a minority of
steps does not inflate (where most neighbouring commits differ by a step, it does, and only the
largest steps are found).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from jobbench.errors import UsageError
from jobbench.measure import stats

ASV_MISSING = (
    "jobbench trend finds change points with airspeed velocity's L1 Potts solver (asv), which "
    "is not installed here; pip install 'jobbench[history]'"
)

# The penalty of a jump, in multiples of the noise and of ln(commits), as the Bayesian
# information criterion's grows with a series' length. Chosen on histories resampled from the
# gate's real reps (benchmarks/change_points.py; docs/history.md has the rates): a lower one
# let more of a heavy tail's lone reps through as steps, a higher one missed steps at the
# range's ends on the noisier rows.
PENALTY = 3.0
# A commit whose reps spread more than this many times the row's noise counts for less.
DISAGREEING = 2.0
# No row of seconds is steadier than this rep to rep (0.01 %, on the log scale); below it a
# row whose reps are all equal would make every difference, however small, a jump.
NOISE_FLOOR = 1e-4


def step_cuts(commits: Sequence[Sequence[float]]) -> list[int]:
    """The places in `commits` (each commit's counted reps, positive, oldest first) where a
    new level begins, oldest first."""
    try:
        from asv.step_detect import solve_potts
    except ImportError:
        raise UsageError(ASV_MISSING) from None
    # Logarithms, so that a step is a ratio and a row's noise, a fraction of its level, is the
    # same before a 5x speed-up as after it.
    levels = [math.log(stats.median(reps)) for reps in commits]
    row = max(noise(commits), NOISE_FLOOR)
    weights = [_weight(reps, row) for reps in commits]
    right, _, _ = solve_potts(levels, weights, PENALTY * math.log(len(levels)) * row)
    return [int(end) for end in right[:-1]]


def _weight(reps: Sequence[float], row: float) -> float:
    """How much a commit's distance from its level counts: sqrt(n) for a median of n reps, as
    its spread shrinks; less for a commit whose own reps spread over DISAGREEING times the
    row's, since two outliers of three reps move a median as far as a step does."""
    return math.sqrt(len(reps)) * min(1.0, DISAGREEING * row / max(noise([reps]), row))


def noise(commits: Sequence[Sequence[float]]) -> float:
    """One rep's noise on the log scale, robustly: from the differences between reps of one
    commit where any commit has two or more, else between neighbouring commits' single reps.

    Each difference of two draws spreads sqrt(2) times as wide as one draw; the median of
    their absolute values (x 1.4826, a normal sample's MAD to its sd) is robust to the
    outliers a commit's few reps keep, and, between commits, to a minority of steps."""
    logs = [[math.log(v) for v in reps] for reps in commits]
    within = [abs(a - b) for reps in logs for a, b in itertools.combinations(reps, 2)]
    between = [abs(b[0] - a[0]) for a, b in itertools.pairwise(logs)]
    differences = within or between
    if not differences:
        return 0.0
    middle = stats.median(differences)
    if middle == 0:  # over half of them tied: their mean, as stats.robust_sd falls back
        return stats.MEAN_AD_TO_SD * math.fsum(differences) / len(differences) / math.sqrt(2)
    return stats.MAD_TO_SD * middle / math.sqrt(2)
