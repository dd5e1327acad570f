"""The CI example: actionlint passes it and flags broken copies of it, and its gate step turns
jobbench's exit codes into the check's outcome as docs/ci.md says, with flags jobbench accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.workflow import EXAMPLE, ROOT, run_step
from tests.programs import NODE, needs

ACTIONLINT = ROOT / "scripts" / "actionlint"
BASE = "1" * 40
HEAD = "2" * 40


def actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ACTIONLINT), *map(str, files)], capture_output=True, text=True, timeout=120
    )


@needs(NODE)  # actionlint is a WebAssembly build node runs (scripts/actionlint)
def test_the_example_passes_actionlint() -> None:
    linted = actionlint(EXAMPLE)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert linted.stdout == ""


@pytest.mark.parametrize(
    ("good", "broken", "finding"),
    [
        ("runs-on: ubuntu-latest", "run-on: ubuntu-latest", 'unexpected key "run-on"'),
        ("steps.refs.outputs.base }}-", "steps.ref.outputs.base }}-", 'property "ref"'),
        ("!cancelled() && steps.refs", "!canceled() && steps.refs", "canceled"),
    ],
    ids=["unknown job key", "step that does not exist", "undefined function"],
)
@needs(NODE)
def test_actionlint_flags_a_broken_copy(
    tmp_path: Path, good: str, broken: str, finding: str
) -> None:
    text = EXAMPLE.read_text()
    assert good in text
    copy = tmp_path / "perf-gate.yml"
    copy.write_text(text.replace(good, broken, 1))
    line = text[: text.index(good)].count("\n") + 1
    linted = actionlint(copy)
    assert linted.returncode == 1, linted.stdout + linted.stderr
    assert any(
        f.startswith(f"{copy}:{line}:") and finding in f for f in linted.stdout.splitlines()
    ), linted.stdout


def fake_jobbench(tmp_path: Path, code: int) -> dict[str, str]:
    """A `jobbench` first on PATH that records its argv and exits `code`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "jobbench"
    argv_file = tmp_path / "argv.json"
    fake.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(argv_file)!r}, 'w').write(json.dumps(sys.argv[1:]))\nsys.exit({code})\n"
    )
    fake.chmod(0o755)
    outputs = tmp_path / "github_output"
    outputs.touch()
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(outputs),
        "BASE_COMMIT": BASE,
        "HEAD_COMMIT": HEAD,
    }


@pytest.mark.parametrize(
    ("code", "step_code", "annotation"),
    [
        (0, 0, None),
        (3, 0, "::warning title=perf gate inconclusive::"),
        (1, 1, "::error title=perf regression::"),
        (2, 2, "::error title=perf gate failed::jobbench gate exited 2"),
        (4, 4, "::error title=perf gate failed::jobbench gate exited 4"),
        (130, 130, "::error title=perf gate failed::jobbench gate exited 130"),
    ],
)
def test_the_gate_step_warns_on_inconclusive_and_fails_on_the_rest(
    tmp_path: Path, code: int, step_code: int, annotation: str | None
) -> None:
    env = fake_jobbench(tmp_path, code)
    ran = run_step("gate", tmp_path, env)
    assert ran.returncode == step_code, ran.stdout + ran.stderr
    annotations = [line for line in ran.stdout.splitlines() if line.startswith("::")]
    if annotation is None:
        assert annotations == []
    else:
        assert len(annotations) == 1 and annotations[0].startswith(annotation), annotations
    assert f"exit-code={code}\n" in Path(env["GITHUB_OUTPUT"]).read_text()


def test_every_gate_flag_of_the_step_is_one_jobbench_accepts(tmp_path: Path) -> None:
    """The step's argv, given to the real CLI: the only error left is that the two commits are
    not in this empty repo, so every flag and value before them was accepted."""
    env = fake_jobbench(tmp_path, 0)
    assert run_step("gate", tmp_path, env).returncode == 0
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[:3] == ["gate", BASE[:12], HEAD[:12]]
    subprocess.run(["git", "init", "-q", "sdk"], cwd=tmp_path, check=True)
    real = subprocess.run(
        [sys.executable, "-m", "jobbench", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert real.returncode == 2, real.stderr
    error = real.stderr.strip()
    assert error.startswith("error: ") and BASE[:12] in error, error
    flags = [arg for arg in argv if arg.startswith("--")]
    assert flags and not [flag for flag in flags if flag in error], error
