"""runpod-python's release history as a git repository, and `jobbench trend` over it
(docs/history.md "A real history: runpod-python's releases").

It downloads the source distribution of every runpod release since --since from PyPI (pip, one
`pip download` a release, kept in --out/sdists), commits each release's files in order into a
fresh repository (--out/runpod-history, branch main, each commit tagged v<version>; a release
whose files declare no dependencies gets a requirements.txt from its PKG-INFO, so its commit's
environment is built like any git ref's, core/sdk/env.py), then runs the trend of the whole range
with the seed suite and with the steady-load suite, each with its page and JSON in --out:

    python benchmarks/sdk_history.py --since 1.0.0 --out /tmp/sdk-history

A quiet machine, and hours: every release runs each suite's rows 5 times (the seed suite's four
rows take about 7.5 minutes a release on 2 cores, the steady suite's four about 9). A re-run
reuses every release already measured in --out/reports. `--smoke` checks the script instead:
the last --smoke-releases releases (3), one small scenario at scaled-down latencies, 3 reps.

Nothing of the SDK is kept in jobbench: the repository and the downloads live in --out.
"""

from __future__ import annotations

import argparse
import email.parser
import re
import shutil
import signal
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jobbench.core.sdk.deps import declared_dependencies  # noqa: E402

SUITES = ("seed", "steady")
SMOKE = (
    "--worker", "runpod", "-w", "1", "-s", "4", "-b", "16", "-j", "0.05",
    "--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2", "--reps", "3",
)  # fmt: skip
RELEASE = re.compile(r"\d+(\.\d+)*")  # final releases only: no rc, beta or dev


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--since", default="1.0.0", help="first release (default 1.0.0)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/sdk-history"))
    parser.add_argument("--suites", default=",".join(SUITES), help="suites to trend, in order")
    parser.add_argument("--build-only", action="store_true", help="build the repository only")
    parser.add_argument("--smoke", action="store_true", help="a few releases, scaled down")
    parser.add_argument("--smoke-releases", type=int, default=3)
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    versions = [v for v in released() if key(v) >= key(args.since)]
    if args.smoke:
        versions = versions[-args.smoke_releases :]
    if len(versions) < 2:
        sys.exit(f"--since {args.since}: {len(versions)} release(s); a trend needs two or more")
    repo = build_repository(versions, out)
    if args.build_only:
        return 0
    code = 0
    for suite in [s for s in args.suites.split(",") if s] if not args.smoke else ["smoke"]:
        code = max(code, trend(repo, versions[0], suite, out))
    return code


def released() -> list[str]:
    """runpod's final releases on PyPI, oldest first (`pip index versions`)."""
    done = run([sys.executable, "-m", "pip", "index", "versions", "runpod"], capture=True)
    match = re.search(r"Available versions: (.+)", done.stdout)
    if match is None:
        sys.exit(f"pip index versions runpod said no versions: {done.stdout or done.stderr}")
    found = [v.strip() for v in match[1].split(",")]
    return sorted((v for v in found if RELEASE.fullmatch(v)), key=key)


def key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def build_repository(versions: list[str], out: Path) -> Path:
    """A fresh repository, one commit a release (an sdist that will not download is left out,
    said so)."""
    sdists, repo = out / "sdists", out / "runpod-history"
    sdists.mkdir(exist_ok=True)
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for version in versions:
        tree = unpacked(version, sdists)
        if tree is None:
            print(f"runpod {version}: no source distribution could be downloaded; left out")
            continue
        for path in repo.iterdir():
            if path.name != ".git":
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        shutil.copytree(tree, repo, dirs_exist_ok=True)
        if declared_dependencies(repo) is None:
            (repo / "requirements.txt").write_text("\n".join(requires(tree)) + "\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--allow-empty", "-m", f"runpod {version} (sdist from PyPI)")
        git(repo, "tag", f"v{version}")
        print(f"runpod {version}: committed")
    return repo


def unpacked(version: str, sdists: Path) -> Path | None:
    """The release's sdist, downloaded once and unpacked beside it."""
    folder = sdists / f"runpod-{version}"
    if folder.is_dir():
        return folder
    done = run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
         "--dest", str(sdists), f"runpod=={version}"],
        capture=True,
    )  # fmt: skip
    archives = sorted(sdists.glob(f"runpod-{version}.tar.gz"))
    if done.returncode != 0 or not archives:
        return None
    with tarfile.open(archives[0]) as archive:
        archive.extractall(sdists, filter="data")
    return folder if folder.is_dir() else None


def requires(tree: Path) -> list[str]:
    """The release's Requires-Dist (PKG-INFO), without extras' requirements."""
    info = email.parser.Parser().parsestr((tree / "PKG-INFO").read_text())
    return [r for r in info.get_all("Requires-Dist") or [] if "extra ==" not in r]


def trend(repo: Path, first: str, suite: str, out: Path) -> int:
    rows = list(SMOKE) if suite == "smoke" else ["--suite", suite]
    command = [
        sys.executable, "-m", "jobbench", "trend", f"v{first}..main", "--repo", str(repo),
        *rows, "--out", str(out / "reports"), "--html", str(out / f"trend-{suite}.html"),
    ]  # fmt: skip
    print("$ " + " ".join(command[1:]), flush=True)
    child = subprocess.Popen(command, text=True, stdout=subprocess.PIPE)
    try:
        table, _ = child.communicate()
    except KeyboardInterrupt:
        # The trend stops its queue and workers and keeps every finished commit: it gets the
        # signal and the time to (subprocess.run would SIGKILL it and orphan its workers).
        child.send_signal(signal.SIGINT)
        child.wait()
        raise
    (out / f"trend-{suite}.txt").write_text(table)
    sys.stdout.write(table)
    print(f"{suite}: exit {child.returncode}; page {out / f'trend-{suite}.html'}")
    return child.returncode


def git(repo: Path, *args: str) -> None:
    run(["git", "-C", str(repo), "-c", "user.name=sdk-history",
         "-c", "user.email=sdk-history@localhost", *args], check=True)  # fmt: skip


def run(
    argv: list[str], capture: bool = False, check: bool = False
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        text=True,
        check=check,
        stdout=subprocess.PIPE if capture else None,
        stderr=subprocess.PIPE if capture else None,
    )


if __name__ == "__main__":
    sys.exit(main())
