"""The repository speaks of the project alone: no text file names a work item by its number or
the sitting of work a change was made in. A reader has neither list;
a feature, a doc, a commit or a date says what a thing is and when it was measured.

Files are listed by git (tracked, or new and not ignored, so a new file is checked before it is
committed), which is why this is not a unit test: those start no process."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.integration.workflow import ROOT

SUFFIXES = (".py", ".md", ".toml", ".yml")
# A work item by number, with or without "#", or split over two lines. This file's examples and
# citations spell the words through ITEM, A_SESSION and A_SITTING so that it names none itself.
ITEM = "issue"
WORK_ITEM = re.compile(r"\b[Ii]ssues?\s*#?\d+")
# The sitting a change was made in. "session" alone is also the project's word for a target's
# session (FakeSession, "the session's list", "one session" of aiohttp's) and "sitting" a plain
# verb ("jobs sitting in a buffer"), so only the phrasings that mean a sitting of work are matched.
SITTING = re.compile(
    r"\b(this|last|earlier|previous|later|next|another|other|same|second|third)\s+"
    r"sessions?\b|\b(before|after|end of) the session\b|\bsittings\b|\bsitting's\b|"
    r"\b(a|an|the|this|that|one|each|same|later|earlier|next|last|previous)\s+sitting\b"
)
A_SESSION, A_SITTING = "session", "sitting"  # the examples' words, apart from their phrasings
# Citations of other projects' issues, each exactly as its file has it.
CITATIONS = {
    "docs/protocol.md": (
        f"SDK {ITEM} #458",
        f"runpod-workers/worker-infinity-embedding {ITEM} 5",
    ),
}
# This file's own examples of what the check finds.
HERE = Path(__file__).resolve().relative_to(ROOT).as_posix()


def text_files() -> list[str]:
    """The repository's text files as a fresh clone has them, this one left out."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    names = (name.decode() for name in listed if name)
    return sorted(n for n in names if n.endswith(SUFFIXES) and (ROOT / n).is_file() and n != HERE)


def findings(text: str, citations: tuple[str, ...] = ()) -> list[str]:
    """What in `text` names a work item or a sitting, each match on one line; the citations
    are taken out first, so they alone are allowed."""
    for citation in citations:
        text = text.replace(citation, "")
    found = [*WORK_ITEM.finditer(text), *SITTING.finditer(text)]
    return [" ".join(match.group(0).split()) for match in sorted(found, key=lambda m: m.start())]


@pytest.mark.parametrize(
    "text",
    [
        f"# An autoscaled fleet ({ITEM} 17)",
        f"absent: before {ITEM} 16, or live",
        f"the branch measured on the deep row, {ITEM}\n38); held jobs",
        f"{ITEM.title()} 15: the simulator ~1.4x faster",
        f"a bench job ({ITEM} #12)",
        f"Re-run at this {A_SESSION}'s code",
        f"2 CPUs shared with another {A_SESSION}'s runs",
        f"other {A_SESSION}s' tests running beside it",
        f"and in a later {A_SITTING} (14:32-16:15 UTC)",
        f"180 reps a side over four {A_SITTING}s",
        f"alternated with the commit before the {A_SESSION}",
    ],
)
def test_a_work_item_or_a_sitting_is_found(text: str) -> None:
    assert findings(text)


@pytest.mark.parametrize(
    "text",
    [
        "Every process it starts is in `processes`, the session's list",
        "class FakeSession: a session per plan, every session stopped",
        "`asyncio.run` runs three tasks on one session",
        "the most jobs sitting in take-ahead buffers",
        "posted to /repos/runpod/runpod-python/issues/42/comments",
        "measured 2026-12-06, 11:40-13:30 UTC, and again 14:32-16:15 UTC",
        "absent: before commit dba92ff, or live",
    ],
)
def test_the_project_terms_pass(text: str) -> None:
    assert findings(text) == []


def test_no_text_file_names_a_work_item_or_a_sitting() -> None:
    files = text_files()
    assert "CHANGELOG.md" in files and "jobbench/cli/__init__.py" in files
    found = {
        name: hits
        for name in files
        if (hits := findings((ROOT / name).read_text(), CITATIONS.get(name, ())))
    }
    assert found == {}


@pytest.mark.parametrize(("name", "citation"), [(n, c) for n, cs in CITATIONS.items() for c in cs])
def test_each_allowed_citation_is_still_in_its_file(name: str, citation: str) -> None:
    # A citation that left its file is no longer allowed anywhere: the list stays exact.
    assert citation in (ROOT / name).read_text()
    assert findings(citation), "a citation the check would not find needs no allowance"
