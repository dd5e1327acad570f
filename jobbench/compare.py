"""Two result documents -> comparison rows (schema `jobbench.comparison/1`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from jobbench import stats
from jobbench.errors import UsageError

SCHEMA = "jobbench.comparison/1"
# (metric name in the comparison, how to read it from one rep)
METRICS: dict[str, tuple[str, ...]] = {
    "time_to_p99_s": ("time_to_p99_s",),
    "e2e_p50_s": ("phases", "e2e", "p50"),
    "e2e_p99_s": ("phases", "e2e", "p99"),
}
# What differs between the two sides on purpose; everything else in params must match, but for
# the latency fields a variant of the comparison sets (`free_latency` below).
VARIANT_PARAMS = {"worker", "policy", "take_ahead"}
MIN_REPS_FOR_TEST = 3


def rep_values(entry: dict[str, Any], path: tuple[str, ...]) -> list[float]:
    values = []
    for rep in entry["reps"]:
        value: Any = rep
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, (int, float)):
            values.append(float(value))
    return values


def shared_params(params: dict[str, Any], free_latency: Collection[str] = ()) -> dict[str, Any]:
    """The params both sides must agree on: without the variants' own settings."""
    shared = {k: v for k, v in params.items() if k not in VARIANT_PARAMS}
    latency = shared.get("latency")
    if free_latency and isinstance(latency, dict):
        shared["latency"] = {k: v for k, v in latency.items() if k not in free_latency}
    return shared


def first_param_difference(
    a: dict[str, Any], b: dict[str, Any], free_latency: Collection[str] = ()
) -> str | None:
    a, b = _flat(shared_params(a, free_latency)), _flat(shared_params(b, free_latency))
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            return f"{key}: {a.get(key)!r} vs {b.get(key)!r}"
    return None


def _flat(params: dict[str, Any]) -> dict[str, Any]:
    """`latency.take` and so on: a difference names the one field that differs."""
    flat = {}
    for key, value in params.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{sub}": v for sub, v in value.items()})
        else:
            flat[key] = value
    return flat


def match_scenarios(
    base: dict[str, Any], cand: dict[str, Any], free_latency: Collection[str] = ()
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Pair scenarios by name; parameters must agree except the variants' own."""
    by_name = {entry["name"]: entry for entry in cand["scenarios"]}
    pairs = []
    for entry in base["scenarios"]:
        other = by_name.get(entry["name"])
        if other is None:
            raise UsageError(
                f"scenario {entry['name']!r} is in {base['label']} but not in "
                f"{cand['label']}; compare results of the same suite"
            )
        diff = first_param_difference(entry["params"], other["params"], free_latency)
        if diff:
            raise UsageError(
                f"scenario {entry['name']!r} differs between {base['label']} and "
                f"{cand['label']} in {diff}; re-run both with the same settings"
            )
        pairs.append((entry, other))
    if not pairs:
        raise UsageError(f"{base['label']} has no scenarios to compare")
    return pairs


def compare_metric(base: list[float], cand: list[float]) -> dict[str, Any]:
    if not base or not cand:
        return {
            "baseline": None,
            "candidate": None,
            "change": None,
            "p_value": None,
            "ci": None,
            "values": {"baseline": base, "candidate": cand},
        }
    base_med, cand_med = stats.median(base), stats.median(cand)
    tested = min(len(base), len(cand)) >= MIN_REPS_FOR_TEST
    ci = stats.bootstrap_ratio_ci(base, cand) if tested and base_med > 0 else None
    return {
        "baseline": stats.summary(base),
        "candidate": stats.summary(cand),
        "change": (cand_med / base_med - 1) if base_med > 0 else None,
        "p_value": stats.mann_whitney_p(base, cand) if tested else None,
        "ci": [ci[0] - 1, ci[1] - 1] if ci else None,
        "values": {"baseline": base, "candidate": cand},
    }


def compare_docs(
    base: dict[str, Any],
    cand: dict[str, Any],
    *,
    paths: Sequence[str | None] = (None, None),
    free_latency: Collection[str] = (),
) -> dict[str, Any]:
    """Rows per scenario; `verdict` fields are filled in by gate.judge. `paths`: where each
    side's result file is, relative to the comparison's folder; `free_latency`: the latency
    fields a variant of the comparison sets, which may differ."""
    rows = []
    for b_entry, c_entry in match_scenarios(base, cand, free_latency):
        metrics = {
            name: compare_metric(rep_values(b_entry, path), rep_values(c_entry, path))
            for name, path in METRICS.items()
        }
        rows.append(
            {
                "scenario": b_entry["name"],
                "params": shared_params(b_entry["params"], free_latency),
                "ideal_s": b_entry["ideal_s"],
                "efficiency": {
                    "baseline": _median_summary(b_entry, "efficiency"),
                    "candidate": _median_summary(c_entry, "efficiency"),
                },
                "split": {"baseline": _last_split(b_entry), "candidate": _last_split(c_entry)},
                "metrics": metrics,
                "verdict": None,
            }
        )
    return {
        "schema": SCHEMA,
        "baseline": _side(base, paths[0]),
        "candidate": _side(cand, paths[1]),
        "rows": rows,
        "verdict": None,
    }


def _side(doc: dict[str, Any], path: str | None) -> dict[str, Any]:
    return {
        "label": doc["label"],
        "path": path,
        "created": doc.get("created"),
        "complete": doc.get("complete", True),
        "workers": sorted({e.get("worker", "") for e in doc["scenarios"]}),
    }


def _median_summary(entry: dict[str, Any], key: str) -> float | None:
    figure = entry.get("summary", {}).get(key) or {}
    value = figure.get("median")
    return float(value) if value is not None else None


def _last_split(entry: dict[str, Any]) -> list[int]:
    if not entry["reps"]:
        return []
    return sorted(
        entry["reps"][-1].get("split", {}).get("jobs_per_worker", {}).values(), reverse=True
    )
