"""Result and comparison documents (reports/README.md): the one reader and writer. Files are
read into the typed models of model.py (a bad field is a ResultsError naming it) and written
back from them, atomically."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from jobbench import __version__
from jobbench.errors import ResultsError
from jobbench.results.history import archive, parse_ref, run_back, saved_runs
from jobbench.results.model import (
    COMPARISON_SCHEMA,
    READABLE_COMPARISON_SCHEMAS,
    RESULT_SCHEMA,
    Comparison,
    Environment,
    Result,
    TargetBlock,
    field_error,
    to_json,
)

SCHEMA = RESULT_SCHEMA
M = TypeVar("M", bound=BaseModel)


def environment(runpod: str | None) -> Environment:
    return Environment(
        python=platform.python_version(),
        platform=platform.platform(),
        cpus=os.cpu_count(),
        runpod=runpod,
        git_sha=_git_sha(),
        cpu_plan=None,  # set when a run pins the embedded queue (jobbench/procs/cpu_plan.py)
    )


def _git_sha() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def new_document(label: str, target: TargetBlock, env: Environment) -> Result:
    """An empty result; `complete` turns true only when every rep of every scenario ran."""
    return Result(
        schema=RESULT_SCHEMA,
        label=label,
        created=created_at().isoformat(timespec="seconds"),
        jobbench=__version__,
        environment=env,
        target=target,
        complete=False,
        interrupted=False,
        error=None,
        scenarios=[],
        time_to_counts="completed",
    )


def created_at() -> datetime:
    """Now, or SOURCE_DATE_EPOCH (the reproducible-builds convention) when set: a simulated
    run's document is then the same bit for bit for the same seed."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not epoch:
        return datetime.now(UTC)
    try:
        return datetime.fromtimestamp(int(epoch), UTC)
    except (ValueError, OverflowError, OSError):
        raise ResultsError(
            f"SOURCE_DATE_EPOCH={epoch!r}: not a whole number of seconds since 1970; "
            "unset it or give e.g. 1700000000"
        ) from None


def result_path(out: Path, label: str) -> Path:
    return out / f"{label}.json"


def comparison_stem(comparison: Comparison) -> str:
    """`<A>-vs-<B>`: the name a comparison's files go by in its folder (its JSON, its
    Markdown), from its sides' labels."""
    return f"{safe_label(comparison.baseline.label)}-vs-{safe_label(comparison.candidate.label)}"


def safe_label(name: str) -> str:
    """A name as a file stem: a result file's own stem, else the name with unsafe runs as `-`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", Path(name).stem if name.endswith(".json") else name)


def find_result(name: str, out: Path) -> Path:
    """Where `name`'s result is: a file as given, else its saved label in `out`, where `run`
    and `compare` save it; `LABEL~N` (or `FILE.json~N`) is the run N before that one, from
    its history (results/history.py). A missing path is returned as is, so the error names it."""
    path = Path(name)
    if path.is_file():
        return path
    ref = parse_ref(name)
    if ref is not None:
        base, back = ref
        current = Path(base) if base.endswith(".json") else result_path(out, safe_label(base))
        return run_back(current, back, name)
    if name.endswith(".json") and path.name != name:
        return path  # missing, in another folder: no guessing at a file of that name in `out`
    return result_path(out, safe_label(name))


def write_document(doc: Result | Comparison, path: Path) -> Path:
    """The one writer of result and comparison files: the model's JSON, written atomically."""
    return write_json(to_json(doc), path)


def save_document(doc: Result | Comparison, path: Path) -> Path:
    """Write `doc` at `path`, the document there (if worth keeping) moved to its history first:
    a new comparison never loses the one before it."""
    kept = archive(path)
    if kept is not None and isinstance(doc, Comparison):
        _repoint_sides(kept, path.parent)
    return write_document(doc, path)


def save_comparison(comparison: Comparison, out: Path) -> Path:
    """`<A>-vs-<B>.json` in `out`, the comparison there before moved to its history."""
    return save_document(comparison, out / f"{comparison_stem(comparison)}.json")


def _repoint_sides(kept: Path, folder: Path) -> None:
    """A comparison moved from `folder` to its history records its sides relative to where it
    was: point each, from where it is now, at the saved run it compared (same `created`; its
    label's history has it if that label ran since), so `report` still reads the right ones."""
    try:
        data = load_json(kept)
    except ResultsError:
        return  # not readable here: kept as it is
    for key in ("baseline", "candidate"):
        side = data.get(key)
        if not isinstance(side, dict) or not isinstance(side.get("label"), str):
            continue
        written = side.get("path")
        was = folder / (
            written if isinstance(written, str) else f"{safe_label(side['label'])}.json"
        )
        side["path"] = os.path.relpath(_same_run(was, side.get("created")), kept.parent)
    write_json(data, kept)


def _same_run(was: Path, created: object) -> Path:
    for path in (was, *reversed(saved_runs(was))):
        try:
            if json.loads(path.read_text()).get("created") == created:
                return path
        except (OSError, ValueError, AttributeError):
            continue
    return was


def write_json(data: dict[str, Any], path: Path) -> Path:
    """Write atomically: a reader never sees half a file, a crash leaves the previous one.
    The one writer under write_document."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle, indent=1)
            handle.write("\n")
        os.chmod(tmp, 0o644)  # mkstemp makes it private; results are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_result(path: Path) -> Result:
    return parse_result(load_json(path), path)


def read_comparison(path: Path) -> Comparison:
    """A comparison file: schema /2, or /1 (written before the gate's decision rule)."""
    return parse_comparison(load_json(path), path)


def load_json(path: Path) -> dict[str, Any]:
    """A result or comparison file as a JSON object, not yet checked against a schema."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ResultsError(
            f"{path}: no such result file; run `jobbench run --label "
            f"{path.stem}` first or check the path"
        ) from None
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: not a readable JSON result ({exc})") from None
    if not isinstance(doc, dict):
        raise ResultsError(f"{path}: not a jobbench result (not a JSON object)")
    return doc


def parse_result(data: dict[str, Any], path: Path | str) -> Result:
    """`data` (read from `path`) as a Result, if it is a result this jobbench can read."""
    if "schema" not in data:
        raise ResultsError(f'{path}: not a jobbench result (no "schema" key)')
    if data["schema"] != SCHEMA:
        raise ResultsError(
            f"{path}: schema {data['schema']!r} is not {SCHEMA!r}; re-run it with "
            "this jobbench or use the jobbench version that wrote it"
        )
    return _validated(Result, data, path)


def parse_comparison(data: dict[str, Any], path: Path | str) -> Comparison:
    if data.get("schema") not in READABLE_COMPARISON_SCHEMAS:
        raise ResultsError(
            f"{path}: schema {data.get('schema')!r} is not {COMPARISON_SCHEMA!r}; re-run the "
            "compare with this jobbench"
        )
    return _validated(Comparison, data, path)


def _validated(model: type[M], data: dict[str, Any], path: Path | str) -> M:
    """The one-line error of a bad field: `reports/x.json: scenarios.0.reps.2.time_to_p99_s:
    Input should be a valid number`."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ResultsError(f"{path}: {field_error(exc)}") from None


def print_json(doc: Result | Comparison) -> None:
    sys.stdout.write(json.dumps(to_json(doc), indent=1) + "\n")
