"""Wall time to a verdict: `jobbench gate` with the real runpod SDK and the default suite, on
three pull requests a maintainer meets (docs/performance.md, "Verdict time"):

- `no-op`: a comment-only commit on v1.12.0, which must pass (exit 0);
- `recheck-slower`: the worker re-checks its slots every 1.15 s instead of 1 s while it is
  full, a +10 % slowdown of the deep burst rows (one pass of the take loop longer), which must
  be found (exit 1);
- `start-on-finish`: a job taken while others run starts only when one of them ends, the
  trickle's defect (exit 1).

It clones a runpod-python repository into a throwaway folder, commits each change on a branch
off v1.12.0 (benchmarks/planted_defects.py's way), builds the SDK's environment once (timed
apart: a CI cache keeps it), then gates each branch against `base` and prints, per gate, the
wall time, the exit code and each row's reps a side and why it stopped:

    git clone <runpod-python> /tmp/runpod-python
    python benchmarks/verdict_time.py --sdk-repo /tmp/runpod-python
    python benchmarks/verdict_time.py --sdk-repo /tmp/runpod-python --only no-op --lanes 1

A quiet machine: nothing else may run beside it. Nothing of the SDK is kept in jobbench.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import machine
from planted_defects import DEFECTS, SCALE, Defect, clone_sdk, git, plant

CASES = (
    next(d for d in DEFECTS if d.branch == "comment-only"),
    Defect(
        "recheck-slower",
        "re-checks its slots every 1.15 s when full (+10 % on the deep bursts)",
        SCALE,
        "                await asyncio.sleep(1)  # don't go rapidly\n",
        "                await asyncio.sleep(1.15)  # don't go rapidly\n",
        "gate",
        1,
    ),
    next(d for d in DEFECTS if d.branch == "start-on-finish"),
)
TINY_RUN = (
    "--worker", "runpod", "-w", "1", "-s", "1", "-b", "1", "-j", "0.01", "--reps", "1",
    "--take-latency", "0.01", "--wake-latency", "0.005", "-q",
)  # fmt: skip


def build_environment(work: Path, sdk: Path, env: dict[str, str]) -> float:
    """The SDK checkout's environment built (its declared dependencies, with uv) by one tiny
    run of the real worker from it; the seconds it took."""
    began = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "jobbench", "run", *TINY_RUN, "--sdk", str(sdk), "-o", "warm"],
        cwd=work, env=env, check=True, capture_output=True,
    )  # fmt: skip
    return time.monotonic() - began


@dataclass(frozen=True)
class Gated:
    code: int
    wall_s: float
    rows: list[str]  # each row's verdict, reps a side and why it stopped


def gate(work: Path, case: Defect, lanes: str, env: dict[str, str]) -> Gated:
    """One gate of the default suite in a folder of its own; what it said and how long."""
    folder = work / f"{case.branch}-lanes-{lanes}"
    folder.mkdir()
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "jobbench", "gate", "base", case.branch, "--repo", str(work / "sdk"),
         "--lanes", lanes, "--markdown", "gate.md"],
        cwd=folder, env=env, text=True, capture_output=True,
    )  # fmt: skip
    wall = time.monotonic() - began
    (folder / "gate.out").write_text(done.stdout + done.stderr)
    found = sorted((folder / "reports").glob("base-vs-*.json"))
    rows = []
    if found:
        for row in json.loads(found[0].read_text())["rows"]:
            reps = row.get("reps") or {}
            rows.append(
                f"{row['scenario']}: {row['verdict']}, {reps.get('baseline')}/"
                f"{reps.get('candidate')} reps, {row.get('stopped')}"
            )
    return Gated(done.returncode, wall, rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdk-repo", type=Path, required=True, help="a runpod-python clone")
    parser.add_argument("--only", nargs="*", help="cases to gate (default: every one)")
    parser.add_argument("--lanes", default="auto", help="the gates' --lanes (default auto)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    for key, value in machine().items():
        print(f"{key}: {value}")
    work = Path(tempfile.mkdtemp(prefix="verdict-time-"))
    # A cache of its own: the environment is built here, timed, and nothing else's is reused.
    env = {**os.environ, "XDG_CACHE_HOME": str(work / "cache"), "CI": "true"}
    ok = True
    try:
        sdk = work / "sdk"
        clone_sdk(args.sdk_repo, sdk, "verdict time")
        git(sdk, "checkout", "-q", "-B", "base", "v1.12.0")
        chosen = [c for c in CASES if not args.only or c.branch in args.only]
        for case in chosen:
            plant(sdk, case)
        git(sdk, "checkout", "-q", "base")
        print(f"environment of v1.12.0 built in {build_environment(work, sdk, env):.0f} s "
              "(once per dependency set; every gate below reuses it)", flush=True)  # fmt: skip
        print(f"\n| pull request | want | exit | wall (lanes {args.lanes}) | each row: verdict, "
              "reps a side, why it stopped |\n|---|---|---|---|---|", flush=True)  # fmt: skip
        for case in chosen:
            got = gate(work, case, args.lanes, env)
            print(f"| {case.what} | {case.want} | {got.code} | {got.wall_s:.0f} s "
                  f"({got.wall_s / 60:.1f} min) | {'; '.join(got.rows)} |", flush=True)  # fmt: skip
            ok = ok and got.code == case.want
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
