"""Cell text shared by every comparison renderer, so the formats agree to the character."""

from __future__ import annotations

from typing import Any

MARKS = {
    "pass": "ok",
    "better": "better",
    "regression": "REGRESSION",
    "inconclusive": "inconclusive",
    None: "",
}
HEADER = (
    "scenario",
    "A p99",
    "B p99",
    "change",
    "A e2e p50",
    "B e2e p50",
    "change",
    "A e2e p99",
    "B e2e p99",
    "change",
    "ideal",
    "eff A",
    "eff B",
    "verdict",
)


def fmt(value: Any, unit: str) -> str:
    """One figure with its unit, the same in the terminal, Markdown and HTML."""
    if not isinstance(value, (int, float)):
        return "-"
    if unit == "%":
        return f"{value:.1%}"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "":
        return f"{value:.0f}"
    if unit == "ratio":
        return f"{value:.3f}"
    return f"{value:.1f} {unit}"


def change(metric: dict[str, Any], with_ci: bool = True) -> str:
    value = metric.get("change")
    if value is None:
        return "-"
    text = f"{value:+.1%}"
    ci = metric.get("ci")
    return f"{text} [{ci[0]:+.1%}, {ci[1]:+.1%}]" if ci and with_ci else text


def median(metric: dict[str, Any], side: str) -> float | None:
    summary = metric.get(side)
    return None if summary is None else float(summary["median"])


def row_cells(row: dict[str, Any], with_ci: bool = True) -> list[str]:
    cells = [row["scenario"]]
    for name in ("time_to_p99_s", "e2e_p50_s", "e2e_p99_s"):
        metric = row["metrics"][name]
        cells += [
            fmt(median(metric, "baseline"), "s"),
            fmt(median(metric, "candidate"), "s"),
            change(metric, with_ci),
        ]
    verdict = row.get("verdict")
    cells += [
        fmt(row["ideal_s"], "s"),
        fmt(row["efficiency"]["baseline"], "%"),
        fmt(row["efficiency"]["candidate"], "%"),
        MARKS.get(verdict, str(verdict)),
    ]
    return cells


def title(comparison: dict[str, Any]) -> str:
    a, b = comparison["baseline"]["label"], comparison["candidate"]["label"]
    return f"A = {a} (baseline), B = {b} (candidate)"


def verdict_lines(comparison: dict[str, Any]) -> list[str]:
    lines = []
    for row in comparison["rows"]:
        if row.get("verdict"):
            lines.append(f"{row['scenario']}: {row['verdict']}: {row.get('reason', '')}")
    if comparison.get("verdict"):
        gate = comparison.get("gate", {})
        lines.append(
            f"overall: {comparison['verdict']} (metric {gate.get('metric')}, max "
            f"regression {gate.get('max_regression', 0):.1%})"
        )
    return lines
