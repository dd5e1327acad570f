"""Where a row's level steps over the commits of a trend (docs/history.md, "The change-point
method"): airspeed velocity's step detection, the L1 Potts model with its penalty chosen by an
information criterion (`asv.step_detect.detect_steps`; Friedrich et al., "Complexity Penalized
M-Estimation", 2008), as asv finds the steps of a benchmark's history.

It fits a piecewise constant level to the commits' values, each jump costing a penalty that it
tunes to the series itself, so it needs no test between two sides: a step with a single commit
on one side (at the range's end, or between two steps) is found as readily as one in the middle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from jobbench.errors import UsageError
from jobbench.measure import stats

ASV_MISSING = (
    "jobbench trend finds change points with airspeed velocity's step detection (asv), which "
    "is not installed here; pip install 'jobbench[history]'"
)


def step_cuts(medians: Sequence[float], reps: Sequence[int]) -> list[int]:
    """The places in `medians` (each commit's median, positive) where a new level begins,
    oldest first; `reps[i]`: how many reps commit i's median is of."""
    try:
        from asv.step_detect import detect_steps
    except ImportError:
        raise UsageError(ASV_MISSING) from None
    # Logarithms, so that a step is a ratio and a row's noise, a fraction of its level, is the
    # same before a 5x speed-up as after it. Around 1, not 0: asv's noise floor is a thousandth
    # of the values' size, which on a benchmark's raw times is 0.1 % of its level, and here
    # stays so whatever the row's unit. A median of n reps is weighed by sqrt(n), as its spread
    # shrinks; asv weighs a point by its precision likewise.
    middle = stats.median(medians)
    levels = [1.0 + math.log(m / middle) for m in medians]
    weights = [math.sqrt(n) for n in reps]
    steps = detect_steps(levels, weights)
    return [int(left) for left, *_ in steps[1:]]
