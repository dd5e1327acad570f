"""The actions' action.yml files, read as GitHub reads them: composite actions whose inputs,
outputs and steps hang together (every input used is declared, every step a script of
action/jobbench_action.py that takes its values through env:), installing jobbench from the
action's own checkout, with third-party actions pinned by version tag."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.integration.workflow import ACTION, ACTIONS, ROOT, WORKFLOWS, load, steps

# The action's scripts are no package: the runner runs them as files, beside each other.
sys.path.insert(0, str(ROOT / "action"))
import jobbench_action

PINNED = re.compile(r"[\w.-]+/[\w./-]+@v\d+(\.\d+){0,2}")
SCRIPT = re.compile(r'python3? "\$GITHUB_ACTION_PATH(/\.\.)?/action/jobbench_action\.py" (\w+)')


def test_the_gate_action_takes_the_inputs_a_workflow_sets() -> None:
    action = load(ACTION)
    defaults = {name: spec.get("default") for name, spec in action["inputs"].items()}
    assert defaults == {
        "sdk-path": ".",
        "base": "",
        "head": "",
        "suite": "gate",
        "budget": "20m",
        "max-regression": "5%",
        "lanes": "auto",
        "python-version": "3.11",
        "comment": "true",
        "accept-label": "perf-accepted",
        "out": "reports",
        "github-token": "${{ github.token }}",
    }
    assert set(action["outputs"]) == {
        "verdict",
        "exit-code",
        "accepted",
        "comment-file",
        "comment-dir",
    }
    assert all(spec.get("description") for spec in action["inputs"].values())


@pytest.mark.parametrize("path", ACTIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_step_is_a_script_fed_through_env(path: Path) -> None:
    action = load(path)
    assert action["runs"]["using"] == "composite"
    text = path.read_text()
    declared = set(action.get("inputs") or {})
    used = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used == declared, "every input declared is used, and every input used is declared"
    for found in steps(path):
        if "run" in found:
            assert found["shell"] == "bash"  # a composite step must name its shell
            assert "${{" not in found["run"], "values reach the script through env:"
            mode = SCRIPT.fullmatch(found["run"].strip())
            assert mode and mode[2] in jobbench_action.MODES, found["run"]
        else:
            assert PINNED.fullmatch(found["uses"]), found["uses"]


@pytest.mark.parametrize("path", [*ACTIONS, *WORKFLOWS], ids=lambda p: str(p.relative_to(ROOT)))
def test_third_party_actions_are_pinned_by_version_tag(path: Path) -> None:
    document = load(path)
    jobs = [None] if "runs" in document else list(document["jobs"])
    used = [s["uses"] for job in jobs for s in steps(path, job) if "uses" in s]
    for uses in used:
        assert PINNED.fullmatch(uses), f"{path.name}: {uses}"


def test_jobbench_is_installed_from_the_actions_own_checkout() -> None:
    """Never from an address a workflow names: the version is the `uses:` ref."""
    runs = [s["run"] for s in steps(ACTION) if "run" in s]
    installs = [run for run in runs if run.strip().endswith(" install")]
    assert len(installs) == 1
    assert jobbench_action.ACTION_PATH == ROOT
    for path in [ACTION, *WORKFLOWS]:
        assert "git+https" not in path.read_text()
