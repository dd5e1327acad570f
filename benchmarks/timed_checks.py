"""The checks that bound measured times, one at a time on a quiet machine (benchmarks/timed/):

    python benchmarks/timed_checks.py               # every check, about 2 minutes on 2 cores
    python benchmarks/timed_checks.py -k planted    # any pytest selection

Each is a pytest test on real worker processes whose verdict rests on figures other work on the
machine disturbs: the simulator against real processes (overheads and event orders), the gate on
defects judged by time or CPU and on a comment-only change, `--reps auto` settling a slowdown,
bisect and trend finding a planted slowdown, and an arrival profile's pacing. jobbench itself sets
a rep aside when outside processes fill the machine, so beside the test suite's other tests they
would be judged on what is left; the suite (`pytest`) therefore keeps only checks of facts and
event orders, and these run here, alone: run them after a change to what they measure, and before
a release. The machine and its load at the start are printed first, as every benchmark does.
"""

from __future__ import annotations

import subprocess
import sys

from common import ROOT, print_machine

TIMED = ROOT / "benchmarks" / "timed"


def main(argv: list[str]) -> int:
    print_machine()
    # One process (the suite's xdist workers would run the checks beside each other), from the
    # project's root so that `tests.e2e` helpers import as in the suite.
    command = [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", str(TIMED)]
    return subprocess.call([*command, *argv], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
