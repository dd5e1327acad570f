"""`python -m fake_queue`: the fake RunPod queue on its own. Its flags, and their help texts,
are `jobbench serve`'s (fake_queue.options); argparse parses them, so workers never load typer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fake_queue.command import serve
from fake_queue.options import SERVE_HELP, ServeOptions

# How argparse reads a flag, where it is not a plain string that defaults to None.
_PARSE: dict[str, dict[str, Any]] = {
    "--port": {"type": int},
    "--seed": {"type": int},
    "--header-timeout": {"type": float},
    "--idle-timeout": {"type": float},
    "--max-connections": {"type": int},
    "--config": {"type": Path},
    "--fault": {"action": "append", "default": [], "dest": "faults", "metavar": "FAULT"},
    "--ready-json": {"action": "store_true"},
}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m fake_queue",
        description="A fake RunPod queue with a measured latency model.",
    )
    for name, help_text in SERVE_HELP.items():
        p.add_argument(name, help=help_text, **_PARSE.get(name, {"default": None}))
    return p


def parse_options(argv: list[str] | None = None) -> ServeOptions:
    args = vars(parser().parse_args(argv))
    return ServeOptions(**{**args, "faults": tuple(args["faults"])})


def main(argv: list[str] | None = None) -> int:
    return serve(parse_options(argv))


if __name__ == "__main__":
    sys.exit(main())
