"""Variants and suites: built-ins plus `jobbench.toml` or `[tool.jobbench]` in pyproject.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fake_queue.api import TAKE_EXTRA, LatencyModel, LatencySpecError
from jobbench.core.scenario.build import build_scenario, check_scenario_faults, row_terms
from jobbench.core.scenario.checks import REPS, check_count, toml_terms
from jobbench.core.scenario.config import Scenario, check_fits
from jobbench.core.scenario.faults import WorkerFault, queue_faults, worker_faults
from jobbench.core.scenario.fleet_spec import EXAMPLE as AUTOSCALE_EXAMPLE
from jobbench.core.scenario.worker import worker_spec
from jobbench.errors import UsageError
from jobbench.results.rep_metrics import METRICS
from jobbench.workers.policies import (
    DEFAULT_SLOTS,
    DRAIN,
    JOB_CACHE,
    SDK_112,
    SDK_TAKE_AHEAD,
    TAKE_AHEAD,
)
from jobbench.workers.spec import WorkerSpec

# The reference table, docs/latency-model.md; the last field is the gated metric, chosen by
# measurement (docs/ci.md, "The seed suite's metrics"): the shallow row's time to 99 % is one
# cycle and carries the SDK's pickup tick whole, its pooled mean end-to-end time averages it.
SEED_ROWS = (
    ("1w-512j-0.5s", 1, 512, 0.5, "time_to_p99_s"),
    ("1w-256j-2s", 1, 256, 2.0, "time_to_p99_s"),
    ("4w-1024j-0.5s", 4, 1024, 0.5, "time_to_p99_s"),
    ("4w-64j-0.5s-shallow", 4, 64, 0.5, "e2e_mean_s"),
)


@dataclass(frozen=True)
class Variant:
    name: str
    worker: WorkerSpec
    latency: dict[str, Any] = field(default_factory=dict)  # overrides of the suite's model
    faults: tuple[str, ...] = ()  # added to each scenario's (core/scenario/faults.py)
    worker_faults: tuple[WorkerFault, ...] = ()

    def describe(self) -> str:
        extra = f", latency {self.latency}" if self.latency else ""
        faults = [*self.faults, *(f.describe() for f in self.worker_faults)]
        return f"{self.worker.describe()}{extra}" + (f", faults {faults}" if faults else "")


@dataclass(frozen=True)
class Suite:
    name: str
    scenarios: tuple[Scenario, ...]
    reps: int = 5
    where: str = ""  # where it is written, for errors: "jobbench.toml suites.fast"
    # Variants the suite sets beside compare's two sides on one table (the `fixes` suite's):
    # compare runs those of them that are neither side, and prints the side-by-side table.
    variants: tuple[str, ...] = ()

    def metric_for(self, scenario: str) -> str | None:
        """The gated metric a scenario of this suite sets (each row's `metric`), if any."""
        return next((s.metric for s in self.scenarios if s.name == scenario), None)


@dataclass(frozen=True)
class Project:
    variants: dict[str, Variant]
    suites: dict[str, Suite]
    source: Path | None = None
    # What core/sweep/sweep_tables.py reads.
    sweeps: dict[str, dict[str, Any]] = field(default_factory=dict)


# The reference fleet (4 workers x 32 slots, 0.5 s jobs, the reference latencies) at a quarter,
# half and nine tenths of its capacity: the rate its drain model completes when offered more
# (83-86 jobs/s in virtual time, docs/load-profiles.md; a take claims what is queued when it
# arrives and asks for the free slots only, so a steady stream keeps a third of the 256 slot-
# jobs a second busy). Poisson arrivals, seeded: both sides of a comparison meet the same jobs;
# judged on the steady end-to-end p99. Then periodic bursts deeper than the fleet's slots, the
# shallow-queue case where a take comes back full and take-ahead engages.
STEADY_CAPACITY_JPS = 84
STEADY_FOR_S = 20
STEADY_ROWS = (
    *(
        (
            f"4w-{share}pct-poisson-{round(STEADY_CAPACITY_JPS * share / 100)}jps",
            f"poisson:{round(STEADY_CAPACITY_JPS * share / 100)}/s:for:{STEADY_FOR_S}s",
        )
        for share in (25, 50, 90)
    ),
    # Bursts of one and a half fleets every 2 s: takes come back full, take-ahead engages.
    ("4w-bursts-192-every-2s", f"bursts:192:every:2s:for:{STEADY_FOR_S}s"),
)

# A trickle of long jobs on one worker at low load (docs/ci.md, "The gate suite"): about two of
# its 8 slots busy, so a job arrives while others run, and a worker that starts such a job only
# when a running one ends (a bug the runpod SDK once had) makes it wait up to a job length. The
# seed rows' bursts never show that: an idle worker takes a burst at once. Poisson, seeded (the
# same arrivals every rep and on both sides), for the steady suite's 20 s: a steady block after
# the warm-up whose end-to-end p99 is steady to the millisecond rep to rep, measured against a
# planted defect.
TRICKLE_SCENARIO = Scenario(
    "1w-8slots-poisson-1jps-2s-trickle",
    workers=1,
    slots=8,  # the SDK's design here too, not a command's concurrency
    job_seconds=2.0,
    load_spec=f"poisson:1/s:for:{STEADY_FOR_S}s",
    metric="steady_e2e_p99_s",
    slots_by_default=True,
)

# The take-ahead PR's open question (docs/fleet.md): the reference fleet's workers (32 slots,
# the reference latencies), up to 4 of them autoscaled from one active worker, under both
# scalers: a deep burst and a ramp past one worker's capacity (0.5 s jobs), and a shallow burst
# of long jobs, where a take-ahead buffer holds half the burst out of the queue the scaler
# watches. Bursts are judged on time to 99 %, ramps on their steady p99; each row's cost
# (worker-seconds) is compared beside it.
AUTOSCALE_ROWS = (
    ("qd4-burst-1024", "queue-delay=4,active=1", None, 1024, 0.5),
    ("rc256-burst-1024", "request-count=256,active=1", None, 1024, 0.5),
    ("qd4-ramp-10-120", "queue-delay=4,active=1", "ramp:10-120/s:over:20s", 0, 0.5),
    ("rc64-ramp-10-120", "request-count=64,active=1", "ramp:10-120/s:over:20s", 0, 0.5),
    ("qd2-64j-8s", "queue-delay=2,active=1", None, 64, 8.0),
    ("rc32-64j-8s", "request-count=32,active=1", None, 64, 8.0),
)

# The take-ahead pull request's K: the jobs a worker takes beyond its free slots, as the PR's
# benchmark ran it (32 slots a worker, take_ahead = 32; design.md section 2).
PR_TAKE_AHEAD = 32
# A server-side fix has two halves (docs/latency-model.md, "A server-side fix"), a variant each:
# a take that finds jobs queued answered in tens of milliseconds instead of the platform's half
# second, and a take handed more jobs than it asked, here the PR's K: the same buffer's worth
# beside a worker's free slots, held because the server sent it rather than because the SDK
# asked, so `server-extra` against `pr` says which side is better placed to hold it.
FIXED_TAKE_S = 0.03
SERVER_TAKE_EXTRA = PR_TAKE_AHEAD
BUILTIN_VARIANTS = {
    "main": Variant("main", WorkerSpec(kind="model", policy=DRAIN)),
    "pr": Variant("pr", WorkerSpec(kind="model", policy=TAKE_AHEAD, take_ahead=PR_TAKE_AHEAD)),
    # The fixes on one table (docs/fixes.md): the PR's take-ahead and #429's job cache on the
    # SDK's own mechanics, with runpod 1.12.0's own loops on them as their baseline, and main's
    # policy on a server with each half of a server-side fix.
    "sdk-main": Variant("sdk-main", WorkerSpec(kind="model", policy=SDK_112)),
    "sdk-pr": Variant(
        "sdk-pr", WorkerSpec(kind="model", policy=SDK_TAKE_AHEAD, take_ahead=PR_TAKE_AHEAD)
    ),
    "job-cache": Variant("job-cache", WorkerSpec(kind="model", policy=JOB_CACHE)),
    "server-fix": Variant(
        "server-fix", WorkerSpec(kind="model", policy=DRAIN), latency={"take": FIXED_TAKE_S}
    ),
    "server-extra": Variant(
        "server-extra",
        WorkerSpec(kind="model", policy=DRAIN),
        latency={TAKE_EXTRA: SERVER_TAKE_EXTRA},
    ),
}
FIX_VARIANTS = ("main", "pr", "sdk-main", "sdk-pr", "job-cache", "server-fix", "server-extra")
# 32 slots is the SDK's design in the reference table, not a command's concurrency
SEED_SCENARIOS = tuple(
    Scenario(n, workers=w, burst=b, job_seconds=j, metric=m, slots_by_default=True)
    for n, w, b, j, m in SEED_ROWS
)
# What `compare` and `gate` run when no --suite is given: the seed rows and the trickle, so a
# change that is faster in bursts and slower in a trickle shows as the trade it is.
DEFAULT_SUITE = "gate"
BUILTIN_SUITES = {
    "seed": Suite("seed", SEED_SCENARIOS),
    DEFAULT_SUITE: Suite(DEFAULT_SUITE, (*SEED_SCENARIOS, TRICKLE_SCENARIO)),
    "steady": Suite(
        "steady",
        tuple(
            Scenario(
                name,
                workers=4,
                job_seconds=0.5,
                load_spec=spec,
                metric="steady_e2e_p99_s",
                slots_by_default=True,
            )
            for name, spec in STEADY_ROWS
        ),
        reps=5,
    ),
    # Built, not written out: a fleet's max workers is the row's workers (build_scenario).
    "autoscale": Suite(
        "autoscale",
        tuple(
            build_scenario(
                name=name,
                workers=4,
                burst=burst or 1024,
                job_seconds=job_seconds,
                load=load,
                metric="steady_e2e_p99_s" if load and load.startswith("ramp") else "time_to_p99_s",
                autoscale=spec,
            )
            for name, spec, load, burst, job_seconds in AUTOSCALE_ROWS
        ),
        reps=5,
    ),
}


# One table that answers the take-ahead PR's question (#647, docs/fixes.md): every fix on a deep
# and the shallow burst, the steady rows at 25, 50 and 90 % of capacity, and the autoscaled fleet
# on a deep burst and on the shallow burst of long jobs, where a buffer hides jobs from the
# scaler. Three reps: the model workers' figures vary little rep to rep, and a real run of the
# seven variants takes long enough.
FIXES_SUITE = Suite(
    "fixes",
    (
        *(s for s in SEED_SCENARIOS if s.name in ("4w-1024j-0.5s", "4w-64j-0.5s-shallow")),
        *(s for s in BUILTIN_SUITES["steady"].scenarios if "poisson" in s.name),
        *(
            s
            for s in BUILTIN_SUITES["autoscale"].scenarios
            if s.name in ("qd4-burst-1024", "qd2-64j-8s")
        ),
    ),
    reps=3,
    variants=FIX_VARIANTS,
)
BUILTIN_SUITES[FIXES_SUITE.name] = FIXES_SUITE


def load_project(folder: Path) -> Project:
    """Built-ins, overlaid by the first of jobbench.toml or pyproject's [tool.jobbench]."""
    table, source = _find_table(folder)
    variants = dict(BUILTIN_VARIANTS)
    suites = dict(BUILTIN_SUITES)
    if table is None:
        return Project(variants, suites)
    where = str(source)
    unknown = set(table) - {"variants", "suites", "sweeps"}
    if unknown:
        raise UsageError(
            f"{where}: unknown key(s) {sorted(unknown)}; use [variants.NAME], [suites.NAME] and "
            "[sweeps.NAME]"
        )
    for name, spec in _tables(table, "variants", where).items():
        variants[name] = _variant(name, spec, f"{where} variants.{name}", folder)
    for name, spec in _tables(table, "suites", where).items():
        suites[name] = _suite(name, spec, f"{where} suites.{name}")
    return Project(variants, suites, source, _tables(table, "sweeps", where))


def _find_table(folder: Path) -> tuple[dict[str, Any] | None, Path | None]:
    for path, keys in (
        (folder / "jobbench.toml", ()),
        (folder / "pyproject.toml", ("tool", "jobbench")),
    ):
        if not path.is_file():
            continue
        try:
            data: Any = tomllib.loads(path.read_text())
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise UsageError(f"{path}: not valid TOML ({exc})") from None
        for depth, key in enumerate(keys):
            if not isinstance(data, dict) or key not in data:
                data = None
                break
            data = data[key]
            if not isinstance(data, dict):  # present but not a table: a mistake, not absent
                where = ".".join(keys[: depth + 1])
                raise UsageError(
                    f"{path}: [{where}] must be a table, e.g. [tool.jobbench.suites.NAME]"
                )
        if isinstance(data, dict):
            return data, path
    return None, None


def _tables(table: dict[str, Any], key: str, where: str) -> dict[str, dict[str, Any]]:
    value = table.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise UsageError(f"{where}: [{key}] must hold tables like [{key}.NAME]")
    return value


# The TOML keys of a variant, suite or scenario row that add faults, with an example of each.
FAULT_KEYS = {"faults": "job-done:drop:0.05", "worker_faults": "pause:2:10:w1"}

VARIANT_KEYS = {"worker", "policy", "take_ahead", "sdk", "python", "env", "latency", *FAULT_KEYS}


def _variant(name: str, spec: dict[str, Any], where: str, folder: Path) -> Variant:
    unknown = set(spec) - VARIANT_KEYS
    if unknown:
        raise UsageError(
            f"{where}: unknown key(s) {sorted(unknown)}; known: {sorted(VARIANT_KEYS)}"
        )
    sdk = spec.get("sdk")
    sdk_path = (folder / sdk).resolve() if sdk else None
    take_ahead = _whole(spec, "take_ahead", 0, where)
    with toml_terms(where):
        worker = worker_spec(
            str(spec.get("worker", "runpod")),
            spec.get("policy"),
            take_ahead,
            sdk_path,
            spec.get("python"),
        )
    env = spec.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in env.values()
    ):
        raise UsageError(f'{where}: env must be a table of NAME = "value" (strings or numbers)')
    worker = replace(worker, env=tuple((str(k), str(v)) for k, v in env.items()))
    latency = spec.get("latency", {})
    _check_latency(latency, where)
    faults, worker_fault_list = _faults(spec, where, ((), ()))
    return Variant(name, worker, dict(latency), faults, worker_fault_list)


def _check_latency(latency: Any, where: str) -> LatencyModel:
    if not isinstance(latency, dict):
        raise UsageError(f"{where}: latency must be a table like {{take = 0.5, wake = 0.05}}")
    try:
        return LatencyModel.from_mapping(latency)
    except LatencySpecError as exc:
        raise UsageError(f"{where}: {exc}") from None


SCENARIO_KEYS = {
    "name",
    "workers",
    "slots",
    "burst",
    "load",
    "job_seconds",
    "metric",
    "autoscale",
    "stall_after",
    *FAULT_KEYS,
}
SUITE_KEYS = {
    "scenarios",
    "latency",
    "reps",
    "metric",
    "autoscale",
    "stall_after",
    "variants",
    *FAULT_KEYS,
}


def _faults(
    table: dict[str, Any], where: str, base: tuple[tuple[str, ...], tuple[WorkerFault, ...]]
) -> tuple[tuple[str, ...], tuple[WorkerFault, ...]]:
    """`faults = ["job-done:drop:0.05"]`, `worker_faults = ["pause:2:10"]`: added to `base`."""
    found = []
    for key in FAULT_KEYS:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(f'{where}: {key} must be a list of strings like ["{FAULT_KEYS[key]}"]')
        found.append(value)
    flag = f"{where}: faults"
    return (
        base[0] + queue_faults(found[0], flag),
        base[1] + worker_faults(found[1], f"{where}: worker_faults"),
    )


def _metric(table: dict[str, Any], default: str | None, where: str) -> str | None:
    value = table.get("metric", default)
    if value is not None and value not in METRICS:
        raise UsageError(f"{where}: metric = {value!r}; use one of {', '.join(METRICS)}")
    return value


def _suite(name: str, spec: dict[str, Any], where: str) -> Suite:
    unknown = set(spec) - SUITE_KEYS
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {sorted(unknown)}; known: {sorted(SUITE_KEYS)}")
    latency = _check_latency(spec.get("latency", {}), where)
    suite_metric = _metric(spec, None, where)
    suite_faults = _faults(spec, where, ((), ()))
    rows = spec.get("scenarios")
    if not isinstance(rows, list) or not rows:
        raise UsageError(
            f"{where}: scenarios must be a non-empty list of tables like "
            '{name = "deep", workers = 4, burst = 1024, job_seconds = 0.5}'
        )
    scenarios = []
    for index, row in enumerate(rows):
        unknown = set(row) - SCENARIO_KEYS if isinstance(row, dict) else {"?"}
        if unknown:
            raise UsageError(
                f"{where}: scenario {index + 1} has unknown key(s) "
                f"{sorted(unknown)}; known: {sorted(SCENARIO_KEYS)}"
            )
        at = f"{where}: scenario {index + 1}"
        faults, worker_fault_list = _faults(row, at, suite_faults)
        load = row.get("load")
        if load is not None and (not isinstance(load, str) or "burst" in row):
            raise UsageError(
                f'{at}: load must be one profile string, e.g. load = "rate:40/s:for:30s", '
                "instead of burst (docs/load-profiles.md)"
            )
        row_name = str(row.get("name", f"s{index + 1}"))
        scenario = build_scenario(  # memory is checked with a variant's workers (apply_variant)
            name=row_name,
            workers=_whole(row, "workers", 4, at),
            slots=None if "slots" not in row else _whole(row, "slots", DEFAULT_SLOTS, at),
            burst=_whole(row, "burst", 1024, at),
            load=load,
            job_seconds=_seconds(row, "job_seconds", 0.5, at),
            latency=latency,
            metric=_metric(row, suite_metric, at),
            faults=faults,
            worker_faults=worker_fault_list,
            stall_s=_stall_after({**spec, **row}, at),
            autoscale=_autoscale(row.get("autoscale", spec.get("autoscale")), at),
            terms=row_terms(at, f"{where}: scenario {row_name}"),
        )
        scenarios.append(scenario)
    names = [s.name for s in scenarios]
    if len(set(names)) < len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise UsageError(f"{where}: scenario name(s) {twice} given twice; names must differ")
    reps = _whole(spec, "reps", 5, where)
    with toml_terms(where):
        check_count(REPS, reps)
    return Suite(name, tuple(scenarios), reps, where, _variant_names(spec, where))


def _variant_names(spec: dict[str, Any], where: str) -> tuple[str, ...]:
    """`variants = ["main", "pr", "job-cache"]`: set beside compare's two sides on one table
    (compare checks each names a variant: a later [variants.NAME] may define it)."""
    value = spec.get("variants", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f'{where}: variants must be a list of variant names like ["main", "pr"]')
    if len(set(value)) < len(value):
        raise UsageError(f"{where}: variants {value}: a name is given twice; give each once")
    return tuple(value)


def _stall_after(table: dict[str, Any], where: str) -> float | None:
    """`stall_after = 1` (the row's or the suite's), run's --stall-after: a suite of scaled-down
    latencies scales the watchdog's bounds down with them (None: from the jobs)."""
    return None if "stall_after" not in table else _seconds(table, "stall_after", 5.0, where)


def _autoscale(value: Any, where: str) -> str | None:
    """`autoscale = "queue-delay=4,active=1"` (core/scenario/fleet_spec.py), the row's or the
    suite's; build_scenario reads it."""
    if value is not None and not isinstance(value, str):
        raise UsageError(f'{where}: autoscale must be a string like "{AUTOSCALE_EXAMPLE}"')
    return value


# TOML has types: a number given as a string or a bool is a mistake to name, not to convert
# (a ValueError would end as a traceback and exit 1, which `gate` means as a regression).
def _whole(table: dict[str, Any], key: str, default: int, where: str) -> int:
    value = table.get(key, default)
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and float(value).is_integer()
    ):
        return int(value)
    raise UsageError(
        f"{where}: {key} = {value!r} is not a whole number; write e.g. {key} = {default}"
    )


def _seconds(table: dict[str, Any], key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise UsageError(
        f"{where}: {key} = {value!r} is not a number of seconds; write e.g. {key} = {default}"
    )


def pick_suite(project: Project, name: str | None) -> Suite:
    """--suite NAME (default the gate's suite), or the one-line error listing the known ones."""
    key = name or DEFAULT_SUITE
    if key not in project.suites:
        raise UsageError(
            f"--suite {key}: no such suite; known: {', '.join(sorted(project.suites))}"
        )
    return project.suites[key]


def apply_variant(suite: Suite, variant: Variant) -> tuple[Scenario, ...]:
    """The suite's scenarios run by this variant's workers (and its latency overrides)."""
    out = []
    for scenario in suite.scenarios:
        where = f"{suite.where or 'suite ' + suite.name}: scenario {scenario.name}"
        if variant.worker.kind == "command" and scenario.slots_by_default:
            fix = "give the row" if suite.where else "run a suite of jobbench.toml whose rows give"
            raise UsageError(
                f"{where}: slots: variant {variant.name} runs a command whose concurrency is "
                f"unknown; {fix} slots = N (how many jobs one process runs at once), e.g. "
                "slots = 1 for a plain sync handler"
            )
        latency = LatencyModel.from_mapping(variant.latency, scenario.latency)
        run = replace(
            scenario,
            worker=variant.worker,
            latency=latency,
            faults=scenario.faults + variant.faults,
            worker_faults=scenario.worker_faults + variant.worker_faults,
        )
        # What the suite's row and the variant were each checked for as they were read stands;
        # what is new is their sum: the variant's worker faults on the row's workers, and the
        # variant's workers in this machine's memory.
        with toml_terms(where):
            check_scenario_faults(run)
            out.append(check_fits(run))
    return tuple(out)
