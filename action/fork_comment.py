"""A fork's pull request gets a read-only token, so its run cannot comment. Its run leaves the
comment and the PR's number as an artifact; a `workflow_run` workflow of the base repository,
which has a token that can comment, posts it. Everything in that artifact was written by a run of
the fork's code, so it is read as untrusted: the number must be a plain integer, the comment is
size-capped and stripped of the marker, each file must be a regular file, and the PR it names
must be the one whose head the finished run ran (checked by the caller against the API)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from runner_env import ActionError

COMMENT = "comment.md"
NUMBER = "pr-number"
# GitHub refuses a comment over 65,536 characters; this leaves room for the marker and the note.
MAX_BODY = 60_000
MAX_NUMBER_BYTES = 32
PLAIN_NUMBER = re.compile(r"[1-9][0-9]{0,9}")


@dataclass(frozen=True)
class Artifact:
    number: int
    body: str
    cut: bool  # the body was over MAX_BODY and cut there


def write(folder: Path, number: int | None, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / COMMENT).write_text(body, encoding="utf-8")
    if number is not None:
        (folder / NUMBER).write_text(f"{number}\n", encoding="utf-8")


def _read(folder: Path, name: str, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of a regular file of the artifact, and whether there was more."""
    path = folder / name
    if path.is_symlink() or not path.is_file():
        raise ActionError(
            f"artifact {folder}: {name} is missing or not a regular file; upload the folder "
            "the gate action's comment-dir output names"
        )
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    return data[:limit], len(data) > limit


def read(folder: Path) -> Artifact:
    if not folder.is_dir():
        raise ActionError(
            f"input artifact: {folder} is not a folder; download the fork run's artifact there"
        )
    raw, more = _read(folder, NUMBER, MAX_NUMBER_BYTES)
    text = raw.decode("ascii", errors="replace").strip()
    if more or not PLAIN_NUMBER.fullmatch(text):
        raise ActionError(
            f"artifact {folder}: {NUMBER} holds {text[:20]!r}, not a pull request number; "
            "it must be the number alone, as the gate action writes it"
        )
    data, cut = _read(folder, COMMENT, MAX_BODY)
    body = data.decode("utf-8", errors="replace")  # a cut may split a character
    if cut:
        body += f"\n\n*(cut at {MAX_BODY:,} bytes: the whole comment is in the run's job summary.)*"
    return Artifact(int(text), body, cut)
