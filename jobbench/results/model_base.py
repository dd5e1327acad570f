"""What every result and comparison model shares: the validation settings, the number type, the
JSON form the one writer (store.py) saves, and the one-line message a bad field gets.

A field with a default is one a document may lack (written before the field existed, or only by
some runs: live-only blocks, a figure only a pooled metric has, what only a judged comparison
holds). The writer dumps with `exclude_unset`, so such a field is written only when the file it
was read from had it or the code set it: no key appears as null that today's writer would not
write. Every other field has no default: the code that builds a document must give it.
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError
from pydantic_core import PydanticCustomError

T = TypeVar("T")


class Doc(BaseModel):
    """Base of every block of a result or comparison document.

    - `extra="allow"`: a key this jobbench does not know (a file from a newer or an older
      jobbench, a hand-added note) is kept and written back, never a read error and never
      dropped: documents only ever gained keys under one schema name. Code reads declared
      fields only, so an unknown key cannot change a figure.
    - `strict=True`: a figure written as a string or a boolean is a corrupt file, not something
      to coerce ("1.5" is not 1.5, true is not 1).
    - `validate_assignment=True`: what the code sets is checked like what a file holds.
    - `ser_json_inf_nan="constants"`: a NaN read from a file is written back as NaN, as json
      writes it, not as null (the reader of the figure says the file is corrupt).
    - `defer_build=True`: a model's validator is built when first used, not at import, so a
      command pays only for the documents it touches (`jobbench run` never builds the
      comparison's).
    """

    model_config = ConfigDict(
        extra="allow",
        strict=True,
        validate_assignment=True,
        ser_json_inf_nan="constants",
        defer_build=True,
    )


def _number(value: object) -> float:
    """An int or a float, kept as it is (an int stays an int, so a file round-trips byte for
    byte); a bool or anything else is refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PydanticCustomError("float_type", "Input should be a valid number")
    return value


# A figure: seconds, a rate, a ratio. `int | float` so the JSON keeps what it was given.
Number = Annotated[int | float, PlainValidator(_number)]


class PerSide(Doc, Generic[T]):
    """One value per side of a comparison: A (baseline) and B (candidate)."""

    baseline: T
    candidate: T


def to_json(doc: BaseModel) -> dict[str, Any]:
    """The JSON object a document is saved as: the file's keys, in the file's order."""
    return doc.model_dump(mode="json", by_alias=True, exclude_unset=True)


def field_error(exc: ValidationError) -> str:
    """`scenarios.0.reps.2.time_to_p99_s: Input should be a valid number`: the first bad field
    by its path in the document, and how many more there are."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"]) or "(document)"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"
