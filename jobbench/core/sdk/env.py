"""Each SDK checkout in its own environment: a venv holding the dependencies the checkout
declares (core/sdk/deps.py), built with uv once per dependency set and kept beside the worktrees
in `$XDG_CACHE_HOME/jobbench/envs/<key>/`. The workers run that venv's python with the checkout
first on PYTHONPATH (workers/kinds.py), so runpod 1.10 gets its filelock whatever jobbench itself
has installed. The checkout itself is not installed: building it needs setuptools_scm and git
metadata, and PYTHONPATH puts it first anyway."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from uv import find_uv_bin

from jobbench.core.sdk.deps import Dependencies, declared_dependencies
from jobbench.core.sdk.gitrefs import cache_root, describe_checkout, jobbench_cache
from jobbench.errors import UsageError
from jobbench.workers.spec import WorkerSpec

Say = Callable[[str], None]
UV_TIMEOUT_S = 1800.0  # a cold install of runpod's ~20 dependencies takes ~10-30 s
REQUIREMENTS = "jobbench-requirements.txt"  # kept in each env: what it was built from


def envs_root() -> Path:
    return jobbench_cache() / "envs"


def env_key(deps: Dependencies) -> str:
    """The same requirement lines on the same Python give the same env, whichever commit
    declared them; any change to them (or to the Python) gives a new one."""
    identity = [sys.implementation.name, sys.version, os.path.realpath(sys.base_prefix)]
    text = "\n".join([*identity, deps.source.name, *deps.lines])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def env_python(env: Path) -> Path:
    return env / "bin" / "python"


def with_sdk_env(spec: WorkerSpec, say: Say) -> WorkerSpec:
    """`spec` with the python of its SDK checkout's own env; `spec` itself when it has no
    checkout, names its --python, or its checkout declares no dependencies."""
    if spec.kind != "runpod" or spec.sdk_path is None or spec.python is not None:
        return spec
    python = checkout_python(spec.sdk_path, say)
    return spec if python is None else replace(spec, python=str(python))


def checkout_python(checkout: Path, say: Say) -> Path | None:
    """The python of the env of `checkout`'s declared dependencies, built if not cached."""
    deps = declared_dependencies(checkout)
    if deps is None:
        say(
            f"{_side(checkout)}: no pyproject.toml, setup.cfg or requirements.txt lists "
            "dependencies; its workers run on jobbench's own Python"
        )
        return None
    env = envs_root() / env_key(deps)
    if not env_python(env).exists():
        with _build_lock(env, say):
            if not env_python(env).exists():  # or another run built it while this one waited
                _build(deps, env, checkout, say)
    return env_python(env)


@contextlib.contextmanager
def _build_lock(env: Path, say: Say) -> Iterator[None]:
    """One build per key at a time, across processes; the lock goes with its holder, even one
    killed mid-build."""
    env.parent.mkdir(parents=True, exist_ok=True)
    with open(env.parent / f".{env.name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another jobbench building the environment {env}...")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _build(deps: Dependencies, env: Path, checkout: Path, say: Say) -> None:
    """Built in a folder of its own, then renamed: an env at its key's path is whole."""
    name = describe_checkout(checkout) or str(checkout)
    say(
        f"building the environment of runpod-python {name} (uv, {deps.count} deps from "
        f"{deps.source.name})..."
    )
    started = time.monotonic()
    staging = Path(tempfile.mkdtemp(prefix=f".{env.name}-", dir=env.parent))
    failure = f"{_side(checkout)}: uv could not build the environment of runpod-python {name}"
    try:
        built = staging / "env"
        _uv(["venv", "--quiet", "--relocatable", "--python", sys.executable, str(built)], failure)
        (built / REQUIREMENTS).write_text("\n".join(deps.lines) + "\n")
        install = ["pip", "install", "--quiet", "--python", str(env_python(built))]
        # run from the checkout: a relative path in its requirements means one in it
        _uv([*install, "-r", str(built / REQUIREMENTS)], failure, cwd=checkout)
        if env.exists():  # under the lock, without a python: a broken one, replaced
            shutil.rmtree(env)
        os.rename(built, env)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    say(f"  built in {time.monotonic() - started:.1f} s: {env}")


def _uv(args: list[str], failure: str, cwd: Path | None = None) -> None:
    way_out = "pass --python PYTHON, an interpreter with the SDK's dependencies (no env is built)"
    try:
        done = subprocess.run(
            [find_uv_bin(), *args],
            capture_output=True,
            text=True,
            timeout=UV_TIMEOUT_S,
            cwd=cwd,
            env={**os.environ, "COLUMNS": "10000"},  # its messages unwrapped: one line each
        )
    except (OSError, subprocess.SubprocessError) as exc:  # uv missing, or timed out
        raise UsageError(f"{failure}: {exc}; {way_out}") from None
    if done.returncode != 0:
        raise UsageError(f"{failure}: {_last_line(done.stderr)}; {way_out}")


def _last_line(stderr: str) -> str:
    """uv's last line that says what went wrong (its `hint:` lines only suggest)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if not line.startswith("hint:")] or lines
    if not said:
        return "no message"
    return said[-1].removeprefix("error: ").removeprefix("cause: ").removeprefix("Caused by: ")


def _side(checkout: Path) -> str:
    """How the user named the checkout: a git ref (a worktree jobbench made) or --sdk PATH."""
    if checkout.resolve().is_relative_to(cache_root().resolve()):
        return f"git ref {describe_checkout(checkout) or checkout.name[:12]}"
    return f"--sdk {checkout}"
