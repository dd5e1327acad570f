"""`jobbench run`: a RunRequest -> a plan on the fake queue, simulated or at a live endpoint -> the
one run loop -> the run table (or JSON) -> exit code."""

from __future__ import annotations

import sys

from jobbench.clients.bench_client import probe_server
from jobbench.clients.endpoint import confirm_burst, live_endpoint, parse_submit_rate
from jobbench.commands.cluster import check_cluster, fake_target, leave_cluster
from jobbench.commands.requests.run import RunRequest
from jobbench.core.run.loop import run_plans
from jobbench.core.run.target_seam import Plan, Target
from jobbench.core.scenario.build import build_scenario
from jobbench.core.scenario.checks import check_writable_file, check_writable_folder
from jobbench.core.scenario.config import RunConfig, Scenario, check_fits, read_inputs
from jobbench.core.scenario.faults import queue_faults, worker_faults
from jobbench.core.scenario.worker import worker_spec
from jobbench.core.sim.sim_target import SimTarget
from jobbench.errors import EXIT_OK, EXIT_RUN_FAILED, UsageError
from jobbench.render.text import dashboard_formats
from jobbench.render.text.progress import make_progress, stdout_console
from jobbench.results.correctness import bad_jobs, describe, side_outcomes
from jobbench.results.model import Result
from jobbench.results.store import print_json


def run_command(req: RunRequest) -> int:
    try:
        return _run(req)
    finally:
        leave_cluster()


def _run(req: RunRequest) -> int:
    limit = fail_limit(req)
    check_cluster(req.cluster, req.target, req.endpoint)
    plan = pick_plan(req)
    if req.html is not None:
        check_writable_file(req.html, "--html")
    check_writable_folder(req.out, "--out")
    console, progress = make_progress(req.quiet)
    docs = run_plans([plan], progress)
    if req.fmt == "json":
        print_json(docs[0])
    elif req.fmt in dashboard_formats.FORMATS:
        dashboard_formats.write(req.fmt, dashboard_formats.of_result(docs[0]), sys.stdout)
    else:
        from jobbench.render.text.terminal import render_result  # rich, only for the table

        render_result(docs[0], console or stdout_console(), saved_to=str(plan.path))
    from jobbench.render.page.report_page import report_after_run

    report_after_run(docs[0], plan.path, req.html, req.quiet)
    return judge_failures(docs[0], limit)


def fail_limit(req: RunRequest) -> float:
    """--max-fail-ratio; by default no job may end badly, unless faults are asked for: then
    ending jobs badly is what is measured."""
    if req.max_fail_ratio is None:
        return 1.0 if req.faults or req.worker_faults else 0.0
    return req.max_fail_ratio


def judge_failures(doc: Result, limit: float) -> int:
    """Exit 4, with one line on stderr, when a scenario ended more of its jobs badly than
    `limit` allows (the table above already said how each ended)."""
    for entry in doc.scenarios:
        side = side_outcomes(entry)
        if side.jobs and bad_jobs(side) / side.jobs > limit:
            sys.stderr.write(
                f"jobbench: {entry.name}: {describe(side)} ({bad_jobs(side) / side.jobs:.1%}), "
                f"over --max-fail-ratio {limit:g}\n"
            )
            return EXIT_RUN_FAILED
    return EXIT_OK


def pick_plan(req: RunRequest) -> Plan:
    if req.target == "sim":
        return sim_plan(req)
    return live_plan(req) if req.endpoint else fake_plan(req)


def fake_plan(req: RunRequest) -> Plan:
    if req.submit_rate is not None:
        raise UsageError("--submit-rate: only live mode paces submissions; add --endpoint URL|ID")
    if req.server:  # a malformed URL, no queue there or a key it refuses: before anything runs
        probe_server(req.server, req.api_key)
    config = _config(req, queue_scenario(req))
    if req.cluster.address is None:
        check_fits(config.scenarios[0])  # its worker processes and its jobs, in this machine
    target = fake_target(req.cluster, req.server, req.api_key, req.seed, req.pin_queue)
    return Plan(config, target)


def sim_plan(req: RunRequest) -> Plan:
    """The fake queue's scenario, simulated in virtual time (core/sim/target.py): nothing to
    connect to, and no processes, so no memory bound on the fleet."""
    for given, flag in (
        (req.endpoint, "--endpoint"),
        (req.server, "--server"),
        (req.submit_rate, "--submit-rate"),
    ):
        if given is not None:
            raise UsageError(f"{flag}: --target sim runs in this process; drop {flag}")
    return Plan(_config(req, queue_scenario(req)), SimTarget(seed=req.seed))


def queue_scenario(req: RunRequest) -> Scenario:
    """The scenario of a fake-queue or simulated run, from the flags."""
    return build_scenario(
        workers=req.workers,
        slots=req.slots,
        burst=req.burst,
        load=req.load,
        job_seconds=req.job_seconds,
        worker=worker_spec(req.worker, req.policy, req.take_ahead, req.sdk, req.python),
        latency=req.latency.model(),
        inputs=read_inputs(req.input_json, req.inputs),
        faults=queue_faults(req.faults),
        worker_faults=worker_faults(req.worker_faults, "--worker-fault"),
        stall_s=req.stall_after,
        autoscale=req.autoscale,
    )


def live_plan(req: RunRequest) -> Plan:
    """No queue and no workers: bursts or arrival profiles at the endpoint; a big one at a real
    endpoint is asked about first, since it costs money."""
    from jobbench.core.live.live_target import LiveTarget, live_scenario_name  # aiohttp: live only

    if req.server:
        raise UsageError("--server and --endpoint: give one (a fake queue URL or a live endpoint)")
    assert req.endpoint is not None
    if req.faults or req.worker_faults:
        raise UsageError(
            "--fault/--worker-fault: faults are injected by the fake queue and its workers; "
            "a live endpoint has neither (drop --endpoint, or the faults)"
        )
    if req.autoscale is not None:
        raise UsageError(
            "--autoscale: a live endpoint scales by its own settings (its fleet over time is "
            "recorded from /health); drop --autoscale, or --endpoint"
        )
    # Its jobs and their length, as a fake-queue run's are checked (bench jobs get the length as
    # their input); a live rep keeps every job's record in memory, so a profile's jobs get
    # --burst's bound too. No workers: the fleet's fields keep their defaults.
    scenario = build_scenario(
        name=live_scenario_name(req.burst, req.job_seconds, req.load),
        burst=req.burst,
        load=req.load,  # a profile's jobs are then the scenario's `burst`
        job_seconds=req.job_seconds,
        inputs=read_inputs(req.input_json, req.inputs),
    )
    config = _config(req, scenario)
    target: Target = LiveTarget(
        live_endpoint(req.endpoint, req.api_key), parse_submit_rate(req.submit_rate)
    )
    url = target.describe().endpoint
    confirm_burst(
        url, scenario.burst, req.reps, yes=req.yes, interactive=sys.stdin.isatty(), ask=ask_stdin
    )
    return Plan(config, target)


def _config(req: RunRequest, scenario: Scenario) -> RunConfig:
    """The run of `scenario`, whichever the target."""
    return RunConfig(
        scenarios=(scenario,),
        reps=req.reps,
        label=req.label,
        out=req.out,
        quiet=req.quiet,
        save_events=req.events,
    )


def ask_stdin(question: str) -> bool:
    sys.stderr.write(question + " [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")
