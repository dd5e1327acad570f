"""Summarise a py-spy raw (collapsed-stack) profile: top functions by self and inclusive time.

.venv/bin/py-spy record --pid PID --duration 10 --rate 1000 --format raw -o prof.txt
.venv/bin/python benchmarks/pyspy_summary.py prof.txt --top 25
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter


def frame_name(frame: str) -> str:
    # "func (path/to/module.py:123)" -> "func (module.py)"; line numbers merged
    m = re.match(r"(.*) \((.*?):\d+\)$", frame)
    if not m:
        return frame
    func, path = m.groups()
    parts = path.split("/")
    short = "/".join(parts[-2:]) if "site-packages" in path or "python3" in path else parts[-1]
    return f"{func} ({short})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("profile", help="py-spy --format raw output")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--grep", default=None, help="only count stacks containing this text")
    args = p.parse_args(argv)
    self_t: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    total = idle = 0
    with open(args.profile) as fh:
        for line in fh:
            stack, _, count_text = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            count = int(count_text)
            if args.grep and args.grep not in stack:
                continue
            frames = [frame_name(f) for f in stack.split(";")]
            total += count
            if "select (selectors" in frames[-1] or "poll (selectors" in frames[-1]:
                idle += count
            self_t[frames[-1]] += count
            for name in set(frames):
                incl[name] += count
    if not total:
        print("no samples")
        return 1
    print(f"samples: {total}, idle in select/poll: {100 * idle / total:.1f}%")
    for title, counter in (("self", self_t), ("inclusive", incl)):
        print(f"\ntop {args.top} by {title} time (% of samples)")
        for name, n in counter.most_common(args.top):
            print(f"  {100 * n / total:5.1f}%  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
