"""`jobbench run`, one pass: the request checked, its plan (a scenario from
core/scenario/build.py, on the fake queue, simulated or at a live endpoint), the one run loop,
the run table (or JSON) and the page, the jobs that ended badly judged against
--max-fail-ratio; the exit code."""

from __future__ import annotations

import sys

from jobbench.clients.bench_client import probe_server
from jobbench.clients.endpoint import confirm_burst, live_endpoint, parse_submit_rate
from jobbench.commands.cluster import check_cluster, fake_target, leave_cluster
from jobbench.commands.requests.run import RunRequest
from jobbench.core.run.loop import run_plans
from jobbench.core.run.target_seam import Plan, Target
from jobbench.core.scenario.build import build_scenario, live_scenario
from jobbench.core.scenario.checks import check_writable_file, check_writable_folder
from jobbench.core.scenario.config import RunConfig, check_fits, read_inputs
from jobbench.core.scenario.faults import queue_faults, worker_faults
from jobbench.core.scenario.worker import worker_spec
from jobbench.core.sim.sim_target import SimTarget
from jobbench.errors import EXIT_OK, EXIT_RUN_FAILED, UsageError
from jobbench.render.text.progress import make_progress
from jobbench.render.text.run_output import show_result
from jobbench.verdict.correctness import over_fail_limit


def run_command(req: RunRequest) -> int:
    try:
        return _run(req)
    finally:
        leave_cluster()


def _run(req: RunRequest) -> int:
    limit = checked(req)
    plan = plan_run(req)
    console, progress = make_progress(req.quiet)
    docs = run_plans([plan], progress)
    show_result(docs[0], req.fmt, console, str(plan.path))
    from jobbench.render.page.report_page import report_after_run

    report_after_run(docs[0], plan.path, req.html, req.quiet)
    failed = over_fail_limit(docs[0], limit)
    if failed is None:
        return EXIT_OK
    sys.stderr.write(f"jobbench: {failed}\n")  # the table above said how each job ended
    return EXIT_RUN_FAILED


def checked(req: RunRequest) -> float:
    """The flags checked against each other once, before the plan reads them (each flag alone
    was checked as it was read): the share of jobs that may end badly (returned), the cluster
    and the endpoint or server against the target, and the output files."""
    limit = fail_limit(req)
    check_cluster(req.cluster, req.target, req.endpoint)
    given = {"--endpoint": req.endpoint, "--server": req.server, "--submit-rate": req.submit_rate}
    if req.target == "sim":
        for flag, value in given.items():
            if value is not None:
                raise UsageError(f"{flag}: --target sim runs in this process; drop {flag}")
    elif req.endpoint and req.server:
        raise UsageError("--server and --endpoint: give one (a fake queue URL or a live endpoint)")
    elif not req.endpoint and req.submit_rate is not None:
        raise UsageError("--submit-rate: only live mode paces submissions; add --endpoint URL|ID")
    if req.html is not None:
        check_writable_file(req.html, "--html")
    check_writable_folder(req.out, "--out")
    return limit


def fail_limit(req: RunRequest) -> float:
    """--max-fail-ratio; by default no job may end badly, unless faults are asked for: then
    ending jobs badly is what is measured."""
    if req.max_fail_ratio is None:
        return 1.0 if req.faults or req.worker_faults else 0.0
    return req.max_fail_ratio


def plan_run(req: RunRequest) -> Plan:
    """What runs and where: the scenario of the flags (the one builder: the fake queue's and the
    simulator's, or a live endpoint's), on the simulator (nothing to connect to, no processes:
    no memory bound on the fleet), a live endpoint (no queue and no workers; a big burst at a
    real one is asked about first, since it costs money) or the fake queue (embedded, or
    --server's, probed before anything runs)."""
    live = req.target == "fake" and bool(req.endpoint)
    if req.server:  # the fake queue's (checked): a bad URL, no queue there, a key it refuses
        probe_server(req.server, req.api_key)
    scenario = (
        live_scenario(
            burst=req.burst,
            load=req.load,
            job_seconds=req.job_seconds,
            inputs=read_inputs(req.input_json, req.inputs),
            faults=req.faults,
            worker_faults=req.worker_faults,
            autoscale=req.autoscale,
        )
        if live
        else build_scenario(
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
    )
    config = RunConfig(
        scenarios=(scenario,),
        reps=req.reps,
        label=req.label,
        out=req.out,
        quiet=req.quiet,
        save_events=req.events,
    )
    target: Target
    if req.target == "sim":
        target = SimTarget(seed=req.seed)
    elif live:
        from jobbench.core.live.live_target import LiveTarget  # aiohttp: live only

        assert req.endpoint is not None
        target = LiveTarget(
            live_endpoint(req.endpoint, req.api_key), parse_submit_rate(req.submit_rate)
        )
        url = target.describe().endpoint
        confirm_burst(url, scenario.burst, req.reps, yes=req.yes, interactive=sys.stdin.isatty())
    else:
        if req.cluster.address is None:
            check_fits(scenario)  # its worker processes and its jobs, in this machine
        target = fake_target(req.cluster, req.server, req.api_key, req.seed, req.pin_queue)
    return Plan(config, target)
