"""The comparison document as JSON (schema jobbench.comparison/2)."""

from __future__ import annotations

import json
from typing import Any, TextIO


def render(comparison: dict[str, Any], out: TextIO, width: int = 100, wide: bool = True) -> None:
    del width, wide
    json.dump(comparison, out, indent=1)
    out.write("\n")
