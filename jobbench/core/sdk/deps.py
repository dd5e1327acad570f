"""What an SDK checkout declares it depends on, read from its files without building it.

runpod-python declared its dependencies in setup.cfg (0.9), then in requirements.txt read by
setup.py, with `dynamic = ["dependencies"]` in pyproject.toml (1.x). Building the checkout to ask
its backend would need setuptools_scm, git metadata and the network for every commit; reading the
files needs none. The first of these that lists any wins, as `pip install .` would read them.
"""

from __future__ import annotations

import configparser
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobbench.errors import UsageError


@dataclass(frozen=True)
class Dependencies:
    """The requirement lines of a checkout, as `uv pip install -r` reads them."""

    source: Path  # the file they were read from
    lines: tuple[str, ...]

    @property
    def count(self) -> int:
        """Requirements, not option lines such as `--index-url`."""
        return sum(1 for line in self.lines if not line.startswith("-"))


def declared_dependencies(checkout: Path) -> Dependencies | None:
    """pyproject.toml's static `[project] dependencies`, setup.cfg's `install_requires`, then
    requirements.txt; None when none of them lists any."""
    readers = (
        ("pyproject.toml", _from_pyproject),
        ("setup.cfg", _from_setup_cfg),
        ("requirements.txt", _from_requirements),
    )
    for name, read in readers:
        path = checkout / name
        if path.is_file():
            lines = tuple(read(path))
            if lines:
                return Dependencies(path, lines)
    return None


def _from_pyproject(path: Path) -> list[str]:
    try:
        data: Any = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"--sdk {path.parent}: cannot read {path.name} ({exc})") from None
    project = data.get("project") if isinstance(data, dict) else None
    if not isinstance(project, dict) or "dependencies" in project.get("dynamic", []):
        return []  # dynamic: whatever setup.py computes, most often from requirements.txt
    return [str(dep).strip() for dep in project.get("dependencies", []) if str(dep).strip()]


def _from_setup_cfg(path: Path) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text())
    except (OSError, UnicodeDecodeError, configparser.Error) as exc:
        raise UsageError(f"--sdk {path.parent}: cannot read {path.name} ({exc})") from None
    listed = parser.get("options", "install_requires", fallback="")
    return _requirement_lines(listed)


def _from_requirements(path: Path) -> list[str]:
    try:
        return _requirement_lines(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--sdk {path.parent}: cannot read {path.name} ({exc})") from None


def _requirement_lines(text: str) -> list[str]:
    """Blank lines and comments dropped (a `#` at the start, or after a space)."""
    lines = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines
