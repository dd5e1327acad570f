"""Run one or more labelled plans, interleaved rep by rep, saving every result after each rep."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobbench.core.config import RunConfig, Scenario
from jobbench.core.fake_target import Progress, ScenarioSession, make_workdir, stop_sessions
from jobbench.core.settle import Settler
from jobbench.errors import Interrupted
from jobbench.measure import metrics
from jobbench.results.store import (
    EventsWriter,
    environment,
    new_document,
    result_path,
    write_json,
)
from jobbench.workers.kinds import describe_sdk, probe_sdk
from jobbench.workers.spec import WorkerSpec


@dataclass
class Plan:
    """One side of a run: its config and where its result goes."""

    config: RunConfig
    api_key: str | None = None

    @property
    def path(self) -> Path:
        return result_path(self.config.out, self.config.label)


def scenario_entry(s: Scenario, sdk: dict[str, Any] | None) -> dict[str, Any]:
    ideal = metrics.ideal_time(s.burst, s.workers, s.slots, s.job_seconds, s.latency.wake.mean)
    return {
        "name": s.name,
        "params": s.params(),
        "ideal_s": ideal,
        "worker": s.worker.describe(),
        "sdk": sdk,
        "gate_metric": s.metric,
        "reps": [],
        "summary": {},
    }


def add_rep(entry: dict[str, Any], figures: dict[str, Any], raw: list[dict[str, Any]]) -> None:
    entry["reps"].append({k: v for k, v in figures.items() if k != "_samples"})
    raw.append(figures)
    entry["summary"] = metrics.summarise_reps(entry["reps"])
    entry["pooled_phases"] = metrics.pooled_phases(raw)
    entry["outliers"] = metrics.outlier_reps(entry["reps"])


def preflight(plans: list[Plan]) -> dict[tuple[int, int], dict[str, Any]]:
    """Check every runpod SDK the workers will import before anything starts or is written:
    a usage error must leave no processes and no half-written result."""
    sdks: dict[tuple[int, int], dict[str, Any]] = {}
    probed: dict[WorkerSpec, dict[str, Any]] = {}  # one probe per variant, not per scenario
    for p, plan in enumerate(plans):
        for s, scenario in enumerate(plan.config.scenarios):
            spec = scenario.worker
            if spec not in probed and (info := probe_sdk(spec)) is not None:
                probed[spec] = info
            if spec in probed:
                sdks[p, s] = probed[spec]
    return sdks


def run_plans(
    plans: list[Plan],
    progress: Progress,
    header: str | None = None,
    settle: Settler | None = None,
) -> list[dict[str, Any]]:
    """Run every plan's scenarios; with several plans, reps alternate A, B, A, B...
    `header` is shown once the settings have passed the preflight checks; `settle` (two
    plans, `--reps auto`) decides after each pair past the first reps whether a row needs more."""
    sdks = preflight(plans)
    if header:
        progress.message(header)
    docs = [_document(plan) for plan in plans]
    writers = [
        EventsWriter(plan.path.with_suffix(".events.jsonl")) if plan.config.save_events else None
        for plan in plans
    ]
    try:
        for index in range(len(plans[0].config.scenarios)):
            _run_scenario(plans, docs, writers, index, progress, sdks, settle)
        for doc in docs:
            doc["complete"] = True
    except KeyboardInterrupt:
        mark_failed(docs, "interrupted (Ctrl-C) before every rep ran", interrupted=True)
        raise Interrupted(
            "interrupted: partial results saved and marked incomplete in "
            + ", ".join(str(p.path) for p in plans)
        ) from None
    except Exception as exc:
        mark_failed(docs, str(exc), interrupted=False)
        raise
    finally:
        for plan, doc, writer in zip(plans, docs, writers):
            write_json(doc, plan.path)
            if writer is not None:
                writer.close()
    return docs


def _document(plan: Plan) -> dict[str, Any]:
    target = {"kind": "fake", "endpoint": plan.config.server_url or "embedded"}
    return new_document(plan.config.label, target, environment(None))


def mark_failed(docs: list[dict[str, Any]], error: str, *, interrupted: bool) -> None:
    for doc in docs:
        doc["complete"] = False
        doc["interrupted"] = interrupted
        doc["error"] = error


def _run_scenario(
    plans: list[Plan],
    docs: list[dict[str, Any]],
    writers: list[EventsWriter | None],
    index: int,
    progress: Progress,
    sdks: dict[tuple[int, int], dict[str, Any]],
    settle: Settler | None,
) -> None:
    workdirs = [make_workdir() for _ in plans]
    sessions = [
        ScenarioSession(
            plan.config.scenarios[index],
            workdir,
            progress,
            label=plan.config.label if len(plans) > 1 else "",
            server_url=plan.config.server_url,
            api_key=plan.api_key,
            seed=plan.config.seed,
            pin_queue=plan.config.pin_queue,
            sdk=sdks.get((p, index)),
        )
        for p, (plan, workdir) in enumerate(zip(plans, workdirs))
    ]
    succeeded = False
    try:
        for session in sessions:
            progress.message(
                f"{session.title}: starting {session.scenario.workers} x "
                f"{session.scenario.worker.describe()}"
            )
            session.start()
        entries = []
        for session, doc in zip(sessions, docs):
            entry = scenario_entry(session.scenario, session.sdk)
            doc["scenarios"].append(entry)
            doc["environment"]["runpod"] = doc["environment"]["runpod"] or describe_sdk(session.sdk)
            doc["environment"]["cpu_plan"] = session.cpu_plan and session.cpu_plan.to_json()
            entries.append(entry)
        raws: list[list[dict[str, Any]]] = [[] for _ in plans]
        reps = plans[0].config.reps
        deadline = settle.begin_row() if settle else 0.0
        rep = 0
        while True:
            rep += 1
            began = time.monotonic()
            for plan, session, entry, raw, doc, writer in zip(
                plans, sessions, entries, raws, docs, writers
            ):
                outcome = session.run_rep(rep, max(rep, reps))
                add_rep(entry, outcome.figures, raw)
                if writer is not None:
                    writer.write_rep(session.scenario.name, rep, outcome.events)
                write_json(doc, plan.path)
            pair_s = time.monotonic() - began
            if rep >= reps and (settle is None or settle.stop(entries, rep, pair_s, deadline)):
                break
        succeeded = True
    finally:
        stop_sessions(sessions)
        if succeeded:  # on failure the worker logs stay for the error message to point at
            for workdir in workdirs:
                shutil.rmtree(workdir, ignore_errors=True)
