"""The comparison document as JSON (schema jobbench.comparison/2)."""

from __future__ import annotations

import json
from typing import TextIO

from jobbench.results.model import Comparison, to_json


def render(comparison: Comparison, out: TextIO, width: int = 100, wide: bool = True) -> None:
    """The same JSON as the saved `<A>-vs-<B>.json`."""
    del width, wide
    json.dump(to_json(comparison), out, indent=1)
    out.write("\n")
