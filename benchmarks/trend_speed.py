"""How many commits an hour `jobbench trend` measures: the default suite over a real history of
the runpod SDK, its rows one at a time (`--lanes 1`) against side by side (`--lanes auto`), each
into a folder of its own (nothing reused), with the change points each marked, which should be
the same (docs/performance.md, "Verdict time"):

    python benchmarks/sdk_history.py --since 1.7.13 --out /tmp/sdk-history --build-only
    python benchmarks/trend_speed.py --repo /tmp/sdk-history/runpod-history --reps 1

A quiet machine, and about half an hour for ten releases at one rep a commit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import machine

# One tiny job a commit: every commit's environment built (with uv, once per dependency set)
# before either trend is timed, so neither pays for it.
WARM_UP = (
    "--workers", "1", "--slots", "1", "--burst", "1", "--job-seconds", "0.01",
    "--take-latency", "0.01", "--wake-latency", "0.005",
)  # fmt: skip


def trend(
    repo: Path, revrange: str, reps: int, lanes: str, out: Path, *extra: str
) -> tuple[float, dict[str, Any]]:
    """One trend into `out`: its wall time and its JSON document."""
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "jobbench", "trend", revrange, "--repo", str(repo), "--reps",
         str(reps), "--lanes", lanes, "--out", str(out), "--json", "-q", *extra],
        text=True, capture_output=True,
    )  # fmt: skip
    wall = time.monotonic() - began
    if done.returncode not in (0, 1):
        raise SystemExit(f"trend --lanes {lanes} exited {done.returncode}: {done.stderr[-2000:]}")
    return wall, json.loads(done.stdout)


def points(doc: dict[str, Any]) -> list[str]:
    return [
        f"{p['ref'] or p['commit'][:8]} {p['scenario']} {p['change']:+.1%}"
        for p in doc["change_points"]
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="benchmarks/sdk_history.py's")
    parser.add_argument("--range", default=None, help="REVRANGE (default: first tag..main)")
    parser.add_argument("--reps", type=int, default=1, help="reps a row per commit")
    args = parser.parse_args()
    for key, value in machine().items():
        print(f"{key}: {value}")
    first = subprocess.run(
        ["git", "-C", str(args.repo), "rev-list", "--max-parents=0", "HEAD"],
        text=True, capture_output=True, check=True,
    ).stdout.split()[0]  # fmt: skip
    revrange = args.range or f"{first}..main"
    work = Path(tempfile.mkdtemp(prefix="trend-speed-"))
    found: dict[str, list[str]] = {}
    wall, _ = trend(args.repo, revrange, 1, "1", work / "warm-up", *WARM_UP)
    print(f"every commit's environment built in {wall:.0f} s (not timed below)", flush=True)
    for lanes in ("1", "auto"):
        wall, doc = trend(args.repo, revrange, args.reps, lanes, work / f"lanes-{lanes}")
        commits = len(doc["commits"])
        found[lanes] = points(doc)
        print(f"--lanes {lanes}: {commits} commits in {wall:.0f} s ({wall / 60:.1f} min), "
              f"{commits / wall * 3600:.1f} commits an hour; change points: "
              f"{'; '.join(found[lanes]) or 'none'}", flush=True)  # fmt: skip
    same = [p.rsplit(" ", 1)[0] for p in found["1"]] == [p.rsplit(" ", 1)[0] for p in found["auto"]]
    print(f"the same change points (commit and row): {'yes' if same else 'no'}; results in {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
