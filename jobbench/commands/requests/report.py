"""`jobbench report` and `jobbench history`: what they read, where the saved runs are."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jobbench.commands.requests.flag import REQUIRED, argument, flag, path, whole
from jobbench.commands.requests.shared import OUT


@dataclass(frozen=True)
class ReportRequest:
    """`jobbench report`'s flags, in the order its help lists them."""

    name: str = argument("NAME", "saved label, result file or A-vs-B.json")()
    html: Path = flag(REQUIRED, "--html", metavar="FILE", read=path, help="the HTML file to write")
    # None: the last rep of each scenario
    rep: int | None = flag(
        None, "--rep", metavar="N", read=whole(1), help="rep to plot (default: the last)"
    )
    out: Path = flag(
        Path("reports"), "--out", "-o", metavar="DIR", read=path, help="folder of saved labels"
    )
    open_browser: bool = flag(False, "--open", help="open it in the web browser")


@dataclass(frozen=True)
class HistoryRequest:
    """`jobbench history`'s flags."""

    # None: every label saved in `out`
    label: str | None = argument(help="saved label (default: every label in --out)", default=None)()
    out: Path = OUT()
