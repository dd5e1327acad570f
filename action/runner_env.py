"""What a GitHub Actions runner gives a step, read and written as the runner expects: the event
that started the run, the step's inputs (`INPUT_<NAME>` in the step's env), its outputs
($GITHUB_OUTPUT), the job summary ($GITHUB_STEP_SUMMARY), annotations on stdout. Standard library
only: the comment action runs on the runner's own python3, with nothing installed."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

DEFAULT_API = "https://api.github.com"
DEFAULT_SERVER = "https://github.com"


class ActionError(Exception):
    """Bad input to a step: one line naming the input and the fix; the step exits 2."""


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def required_env(name: str, fix: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise ActionError(f"{name} is not set; {fix}")
    return value


def step_input(name: str, default: str = "") -> str:
    """The action input `name` (`sdk-path` is `INPUT_SDK_PATH`), stripped; `default` if empty."""
    value = os.environ.get("INPUT_" + name.upper().replace("-", "_"), "").strip()
    return value or default


def flag_input(name: str, default: bool) -> bool:
    """A true/false input, as YAML's booleans reach a composite action: as text."""
    value = step_input(name, "true" if default else "false").lower()
    if value not in ("true", "false"):
        raise ActionError(f"input {name}: {value!r} is not true or false; give true or false")
    return value == "true"


def event() -> dict[str, Any]:
    """The payload of the event that started the run ({} when there is none, as for a test)."""
    path = env("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ActionError(f"GITHUB_EVENT_PATH {path}: cannot read it as JSON ({err})") from err
    return payload if isinstance(payload, dict) else {}


def repository() -> str:
    """`owner/name` of the repository the workflow runs in."""
    return required_env("GITHUB_REPOSITORY", "run this in a GitHub Actions step")


def api_url() -> str:
    return env("GITHUB_API_URL", DEFAULT_API).rstrip("/")


def run_url() -> str:
    """The link to this run's log and artifacts."""
    server = env("GITHUB_SERVER_URL", DEFAULT_SERVER).rstrip("/")
    return f"{server}/{repository()}/actions/runs/{env('GITHUB_RUN_ID', '0')}"


def set_output(name: str, value: str) -> None:
    """One step output. A multi-line value goes in a heredoc whose delimiter cannot occur in
    it, so a value can never end its own block and set another output."""
    path = env("GITHUB_OUTPUT")
    if not path:
        print(f"{name}={value}")  # outside a runner: shown, not kept
        return
    with open(path, "a", encoding="utf-8") as handle:
        if "\n" in value:
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            handle.write(f"{name}={value}\n")


def append_summary(markdown: str) -> None:
    path = env("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(markdown.rstrip("\n") + "\n")


def add_path(folder: Path) -> None:
    """Put `folder` first on PATH for the steps after this one."""
    path = env("GITHUB_PATH")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{folder}\n")


def _escape(text: str, properties: bool) -> str:
    """Workflow command escaping: a message may not hold % CR LF raw, a property not : or ,."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if properties else text


def annotate(level: str, title: str, message: str) -> None:
    """An `error`, `warning` or `notice` annotation on the run and the PR's checks."""
    print(f"::{level} title={_escape(title, True)}::{_escape(message, False)}", flush=True)
