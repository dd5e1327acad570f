"""Two result documents -> comparison rows (schema `jobbench.comparison/2`): per metric every
rep's value, the reps set aside and the evidence; gate.py turns it into verdicts."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from jobbench.errors import ResultsError, UsageError
from jobbench.measure import stats
from jobbench.results.decision import Evidence, Rule, weigh

SCHEMA = "jobbench.comparison/2"
READABLE_SCHEMAS = ("jobbench.comparison/1", SCHEMA)  # /1: before the gate's decision rule


@dataclass(frozen=True)
class Metric:
    path: tuple[str, ...]  # where one rep holds it
    label: str  # what it is, for headers and legends
    pooled: bool = False  # the side's figure is over every job of every rep, not a median


METRICS: dict[str, Metric] = {
    "time_to_p99_s": Metric(("time_to_p99_s",), "time to 99 % done"),
    "time_to_p100_s": Metric(("time_to_p100_s",), "time to 100 % done"),
    "e2e_p50_s": Metric(("phases", "e2e", "p50"), "job end-to-end p50"),
    "e2e_p99_s": Metric(("phases", "e2e", "p99"), "job end-to-end p99"),
    "e2e_mean_s": Metric(("phases", "e2e", "mean"), "mean job end-to-end, pooled", pooled=True),
}
DEFAULT_METRIC = "time_to_p99_s"
# What differs between the two sides on purpose; everything else in params must match, but for
# the latency fields a variant of the comparison sets (`free_latency` below).
VARIANT_PARAMS = {"worker", "policy", "take_ahead"}


def gated_metric(chosen: str | None, entry: dict[str, Any]) -> str:
    """The metric a row is judged on: the one chosen (--metric, else the suite's row), else
    the one the result recorded for its scenario when it ran, else time to 99 %."""
    recorded = entry.get("gate_metric")
    return chosen or (recorded if recorded in METRICS else None) or DEFAULT_METRIC


def rep_values(entry: dict[str, Any], name: str, source: str, required: bool) -> list[float | None]:
    """One figure of every rep. A NaN, an infinity or a non-number is a corrupt file (a
    ResultsError naming the field); a missing figure is None, or corrupt too if `required`
    (the gated metric: a verdict never rests on a silently shorter list)."""
    values: list[float | None] = []
    for index, rep in enumerate(entry["reps"]):
        value: Any = rep
        for key in METRICS[name].path:
            value = value.get(key) if isinstance(value, dict) else None
        where = f"{source}: scenario {entry['name']!r} rep {index + 1} field {name}"
        if value is None and not required:
            values.append(None)
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ResultsError(f"{where} is {value!r}, not a number; re-run that side")
        elif not math.isfinite(value):
            raise ResultsError(f"{where} is {value!r}; the file is corrupt, re-run that side")
        else:
            values.append(float(value))
    return values


def rep_flags(entry: dict[str, Any]) -> list[str | None]:
    """Why the runner flagged each rep (`anomalies`: a stall, a saturated harness, an
    unrequested fault), or None: flagged reps never count towards a verdict."""
    flags: list[str | None] = []
    for rep in entry["reps"]:
        found = rep.get("anomalies") or []
        kinds = [str(a.get("kind", a)) if isinstance(a, dict) else str(a) for a in found]
        flags.append(f"flagged: {', '.join(kinds)}" if kinds else None)
    return flags


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


def compare_metric(
    entries: tuple[dict[str, Any], dict[str, Any]],
    name: str,
    sources: tuple[str, str],
    required: bool,
    rule: Rule,
) -> dict[str, Any]:
    """One metric of one row: every rep's value, the reps set aside, and the evidence."""
    values = [rep_values(e, name, src, required) for e, src in zip(entries, sources)]
    # A figure some reps lack (a file from before it existed) is not compared on that side.
    kept = [[v for v in vals if v is not None] if None not in vals else [] for vals in values]
    flags = [rep_flags(e) if k else [] for e, k in zip(entries, kept)]
    evidence = weigh(kept[0], kept[1], rule, (flags[0], flags[1]))
    return {
        "baseline": _side_figure(entries[0], name, evidence, 0, kept[0]),
        "candidate": _side_figure(entries[1], name, evidence, 1, kept[1]),
        "change": evidence.change,
        "ci": list(evidence.ci) if evidence.ci else None,
        "p_slower": evidence.p_slower,
        "p_faster": evidence.p_faster,
        "spread": {"baseline": evidence.spread[0], "candidate": evidence.spread[1]},
        "excluded": [asdict(e) for e in evidence.excluded],
        "clean": {"baseline": list(evidence.clean[0]), "candidate": list(evidence.clean[1])},
        "unsteady": evidence.unsteady,
        "values": {"baseline": values[0], "candidate": values[1]},
    }


def _side_figure(
    entry: dict[str, Any], name: str, evidence: Evidence, side: int, values: list[float]
) -> dict[str, float] | None:
    """Median / min / max / n of the reps that count; a pooled metric adds `pooled`, the
    figure over every job of those reps (each rep's value, a mean, weighted by the jobs it
    served). `values`: every rep's value, in rep order."""
    clean = evidence.clean[side]
    if not clean:
        return None
    figure = stats.summary(clean)
    if METRICS[name].pooled:
        out = {e.rep for e in evidence.excluded if e.side == "AB"[side]}
        weighted = [
            (value, _served(rep))
            for i, (value, rep) in enumerate(zip(values, entry["reps"]), start=1)
            if i not in out
        ]
        jobs = sum(n for _, n in weighted)
        figure["pooled"] = (
            math.fsum(v * n for v, n in weighted) / jobs if jobs else figure["median"]
        )
    return figure


def _served(rep: dict[str, Any]) -> int:
    jobs = rep.get("jobs") or {}
    return int(jobs.get("completed", 0)) + int(jobs.get("failed", 0)) or 1


def compare_docs(
    base: dict[str, Any],
    cand: dict[str, Any],
    *,
    paths: Sequence[str | None] = (None, None),
    sources: Sequence[str] | None = None,
    free_latency: Collection[str] = (),
    metric_for: Callable[[str], str | None] = lambda _: None,
    rule: Rule | None = None,
) -> dict[str, Any]:
    """Rows per scenario; `verdict` fields are filled in by gate.judge. `paths`: where each
    side's result file is, relative to the comparison's folder; `sources`: how an error names
    each side (the file as the user gave it; default: `paths`, else the label);
    `free_latency`: the latency fields a variant of the comparison sets, which may differ;
    `metric_for`: the gated metric chosen for a scenario (by name; see gated_metric), which
    every rep must hold."""
    names = sources or (paths[0] or base["label"], paths[1] or cand["label"])
    rule = rule or Rule()
    rows = []
    for b_entry, c_entry in match_scenarios(base, cand, free_latency):
        gated = gated_metric(metric_for(b_entry["name"]), b_entry)
        metrics = {
            name: compare_metric(
                (b_entry, c_entry), name, (names[0], names[1]), name == gated, rule
            )
            for name in METRICS
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
                "reps": {"baseline": len(b_entry["reps"]), "candidate": len(c_entry["reps"])},
                "metric": gated,
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
        "error": doc.get("error"),
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
