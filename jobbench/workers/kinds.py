"""Worker kinds: the command line and environment of each worker process, its own folder, and
what SDK it uses.

Each setting reaches a worker under one name (policies.py): the slots and take-ahead K as
JOBBENCH_SLOTS and JOBBENCH_TAKE_AHEAD, for every kind, and the model worker's policy as
JOBBENCH_POLICY. The runpod SDK is given slots and K by runpod_entry.py, as the config keys it
reads; no RUNPOD_* variable repeats them (a variant's `env` may still set one for an SDK build
that wants it).
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import site
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from fake_queue.protocol import worker_env
from jobbench.errors import UsageError
from jobbench.workers.policies import DEFAULT_POLICY, POLICY_ENV, SLOTS_ENV, TAKE_AHEAD_ENV
from jobbench.workers.spec import WorkerSpec

HERE = Path(__file__).resolve().parent
RUNPOD_ENTRY = HERE / "runpod_entry.py"
LOCAL_KEY = "jobbench-local"  # what workers send when the fake queue needs no key
WORKER_TMP, WORKER_HOME = "tmp", "home"  # in each worker's own folder
# What worker_env sets that a variant's env may still change: how the SDK runs, not where the
# queue is.
VARIANT_MAY_SET = frozenset(
    {"RUNPOD_LOG_LEVEL", "RUNPOD_SKIP_AUTO_SYSTEM_CHECKS", "RUNPOD_SKIP_GPU_CHECK"}
)

# The SDK's version, where it is, whether it knows take_ahead, and whether runpod.serverless
# imports with this python (its dependencies there): once per side, ~2 s, before any worker starts.
# The runpod pip installed beside jobbench came with its dependencies: not imported (argv[1]).
_SDK_PROBE = r"""
import importlib.metadata as md, importlib.util, json, pathlib, sys
check_import = sys.argv[1] == "import"
spec = importlib.util.find_spec("runpod")
if spec is None or not spec.origin:
    print(json.dumps(None))
else:
    origin = pathlib.Path(spec.origin).resolve()
    root = origin.parent
    try:  # the installed distribution's version, if that is what will be imported
        dist = md.distribution("runpod")
        installed = pathlib.Path(dist.locate_file("runpod/__init__.py")).resolve()
        version = dist.version if installed == origin else None
    except md.PackageNotFoundError:
        version = None
    serverless = " ".join(p.read_text(errors="ignore") for p in (root / "serverless").rglob("*.py"))
    try:
        if check_import or version is None:
            import runpod.serverless
        problem = None
    except ImportError as exc:
        problem = str(exc)
    except Exception as exc:  # an SDK too old or too new for this python fails in its own way
        problem = f"{type(exc).__name__}: {exc}"
    print()  # whatever the SDK printed while importing stays on the lines before
    print(json.dumps({"version": version, "path": str(root), "python": sys.executable,
                      "take_ahead": "take_ahead" in serverless.lower(), "problem": problem}))
"""


def _base_env(spec: WorkerSpec) -> dict[str, str]:
    # The user's RUNPOD_* settings (a real key, realtime mode) must not leak into bench workers.
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNPOD_")}
    env.pop("PYTHONPATH", None)
    if spec.sdk_path is not None:
        env["PYTHONPATH"] = str(spec.sdk_path.resolve())
    env.update(dict(spec.env))
    return env


def sdk_info(spec: WorkerSpec) -> dict[str, Any]:
    """Version, path, python and take-ahead support of the runpod SDK the workers will import;
    an SDK that does not import there is refused, naming what is missing."""
    python = spec.python or sys.executable
    info = json.loads(_run_probe(spec, python).strip().splitlines()[-1])
    if info is None:
        raise UsageError(
            f"--worker runpod: the runpod SDK is not importable by {python}; "
            "pip install runpod there, or pass --sdk PATH to a checkout"
        )
    problem = info.pop("problem")
    if problem is not None:
        flag = f"--sdk {spec.sdk_path}" if spec.sdk_path is not None else f"--python {python}"
        raise UsageError(
            f"{flag}: runpod at {info['path']} cannot be imported by {python}: {problem}; "
            "declare what is missing in the SDK's requirements, or pass --python PYTHON with "
            "it installed"
        )
    return dict(info)


def _import_check(spec: WorkerSpec) -> str:
    """`import` for an SDK whose dependencies nobody vouches for: a checkout, another python.
    jobbench's own runpod (installed, so `version` is known) came with its dependencies."""
    return "import" if spec.sdk_path is not None or spec.python is not None else "installed"


def _run_probe(spec: WorkerSpec, python: str) -> str:
    """The probe's output, run as a worker runs: from a folder of its own, so nothing the import
    writes lands in the user's and no `runpod/` folder there is found in place of the SDK."""
    launched_in = Path.cwd()
    try:
        with tempfile.TemporaryDirectory(prefix="jobbench-probe-") as probe_dir:
            folder = worker_folder(Path(probe_dir), "probe")
            env = _base_env(spec)
            own = _own_folders_env(folder).items()
            env.update({k: v for k, v in own if k not in dict(spec.env)})
            return subprocess.run(
                [_program(python, launched_in), "-c", _SDK_PROBE, _import_check(spec)],
                env=env,
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=120,  # importing the SDK on a busy two-core box
                check=True,
            ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(
            f"--python {python}: cannot run it to find the runpod SDK ({exc})"
        ) from None


def worker_folder(workdir: Path, worker_id: str) -> Path:
    """Make `workdir/<worker_id>/`, a worker's own folder as a container has one: its working
    directory (SDK 1.7-1.10 keep their in-progress jobs there, in .runpod_jobs.pkl), holding its
    own tmp/ (TMPDIR) and home/ (HOME)."""
    folder = workdir / worker_id
    for sub in (WORKER_TMP, WORKER_HOME):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return folder


def worker_process_spec(
    spec: WorkerSpec,
    worker_id: str,
    endpoint_url: str,
    slots: int,
    api_key: str | None,
    folder: Path,
) -> tuple[list[str], dict[str, str]]:
    """argv and env for one worker process run from its own `folder` (`worker_folder`); relative
    paths in them are read against the folder jobbench runs in, as the user wrote them."""
    launched_in = Path.cwd()
    env = _base_env(spec)
    env.update(worker_env(endpoint_url, worker_id))
    env.update(
        {
            "RUNPOD_AI_API_KEY": api_key or LOCAL_KEY,
            SLOTS_ENV: str(slots),
            TAKE_AHEAD_ENV: str(spec.take_ahead),
            "PYTHONUNBUFFERED": "1",
        }
    )
    # Its own HOME for the SDK too: no ~/.runpod/config.toml overrides the key. A variant's env
    # may still set any of these, and the SDK's tuning (its log level, its checks); the wiring to
    # the queue and the slots are jobbench's.
    env.update({k: v for k, v in _own_folders_env(folder).items() if k not in dict(spec.env)})
    env.update({k: v for k, v in spec.env if k in VARIANT_MAY_SET})
    if spec.kind == "model":
        env[POLICY_ENV] = spec.policy or DEFAULT_POLICY
        return [sys.executable, "-m", "jobbench.workers.policy_worker"], env
    if spec.kind == "runpod":
        return [_program(spec.python or sys.executable, launched_in), str(RUNPOD_ENTRY)], env
    return _user_command(spec.command or "", env, launched_in)


def _user_command(
    command: str, env: dict[str, str], launched_in: Path
) -> tuple[list[str], dict[str, str]]:
    """`--worker "CMD"` as it would run where the user typed it, from the worker's folder."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"--worker {command!r}: cannot split it ({exc})") from None
    if "-m" in words or "-c" in words:
        # python -m / -c put the current folder first on sys.path: the worker's is its own, so
        # the one the user's modules are in goes on PYTHONPATH in its place.
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(launched_in), env.get("PYTHONPATH")]))
    return command_argv(words, launched_in), env


def _own_folders_env(folder: Path) -> dict[str, str]:
    """HOME and the temp folder in the worker's own folder; the user's packages installed with
    `pip install --user` (found under HOME) stay importable."""
    tmp = str(folder / WORKER_TMP)
    return {
        "HOME": str(folder / WORKER_HOME),
        "TMPDIR": tmp,
        "TMP": tmp,
        "TEMP": tmp,
        "PYTHONUSERBASE": os.environ.get("PYTHONUSERBASE") or site.getuserbase(),
    }


def command_argv(words: list[str], launched_in: Path) -> list[str]:
    """A user command that runs the same from the worker's own folder: the program if given as a
    path (a bare name is looked up on PATH, as a shell does) and every later word that names a
    file or folder in `launched_in` become absolute; options and the module after -m stay."""
    if not words:
        return []
    argv = [_program(words[0], launched_in)]
    for before, word in itertools.pairwise(words):
        is_path = word[:1] not in ("", "-") and before != "-m" and (launched_in / word).exists()
        argv.append(os.path.normpath(launched_in / word) if is_path else word)
    return argv


def _program(program: str, launched_in: Path) -> str:
    return os.path.normpath(launched_in / program) if os.sep in program else program


def probe_sdk(spec: WorkerSpec) -> dict[str, Any] | None:
    """The runpod SDK a runpod worker will import (None for other kinds), refused if it cannot
    do the --take-ahead asked for."""
    if spec.kind != "runpod":
        return None
    info = sdk_info(spec)
    check_take_ahead_support(spec, info)
    return info


def check_take_ahead_support(spec: WorkerSpec, info: dict[str, Any]) -> None:
    if spec.kind == "runpod" and spec.take_ahead and not info.get("take_ahead"):
        raise UsageError(
            f"--take-ahead {spec.take_ahead}: the runpod SDK {info.get('version')} at "
            f"{info.get('path')} has no take-ahead, so this would measure without it; point "
            "--sdk at a branch that has it, or use --worker model --policy take-ahead"
        )


def describe_sdk(info: dict[str, Any] | None) -> str | None:
    if not info:
        return None
    return str(info.get("version") or info.get("path"))
