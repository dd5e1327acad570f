"""`python -m fake_queue`: the fake RunPod queue on its own, from the same parser and options as
`jobbench serve` (fake_queue.options); argparse reads them, so workers never load typer.
"""

from __future__ import annotations

import sys

from fake_queue.command import EXIT_USAGE, serve
from fake_queue.options import OptionsError, parse_options


def main(argv: list[str] | None = None) -> int:
    try:
        options = parse_options(argv)
    except OptionsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return serve(options)


if __name__ == "__main__":
    sys.exit(main())
