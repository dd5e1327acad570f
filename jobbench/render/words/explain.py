"""The words beside a run's figures, for the terminal and the HTML page alike: a scenario's title
(worker, policy, take-ahead, slots), the names of the job phases (fake and live mode measure them
differently, so they are named differently), and the legend under the run table: one clause per
figure, the ideal's formula with the scenario's numbers, and what the latency model expects of
each policy, which is how an efficiency reads (docs/metrics.md)."""

from __future__ import annotations

from typing import Any

from fake_queue.api import TAKE_EXTRA, LatencySpecError, parse_distribution
from fake_queue.queue.scalers import SCALERS
from jobbench.measure.analytic import NO_CLOSED_FORM, expected_time_s
from jobbench.measure.concurrency import below_slots_text
from jobbench.render.words.cells import fmt
from jobbench.results.model import LatencyDistribution, ScenarioResult
from jobbench.verdict.comparison import is_profile
from jobbench.workers.policies import DRAIN, SDK_112, TAKE_AHEAD

# The result keeps `phases.service` in both modes, but not the same span (docs/metrics.md):
# claim -> done in fake mode, the platform's executionTime live. Each is named for what it is.
PHASE_NAMES = {
    False: {"queue_wait": "queue wait", "service": "take to done", "e2e": "end-to-end"},
    True: {"queue_wait": "delayTime", "service": "executionTime", "e2e": "end-to-end"},
}
# The policies whose efficiency the legend foretells for every scenario; a model worker's own
# policy is added when it is another (sdk-take-ahead), or said to have no figure (job-cache).
MODELLED = (DRAIN, TAKE_AHEAD, SDK_112)

FAKE_LEGEND = (
    "time to X %: from the burst's submit until X % of its jobs completed; throughput: "
    "completed jobs / time to 100 %; median / min / max: over the reps.",
    "queue wait: submit until a take claimed the job; take to done: that claim until done (the "
    "take's answer, any wait in a take-ahead buffer, the handler, the done report: more than the "
    "job); end-to-end: submit until done.",
    "takes: job-take requests answered; mean take size: jobs per take; requests per job: the "
    "workers' takes and job-done posts per completed job (heartbeats not counted); split: jobs "
    "each worker served.",
)
IDEAL_LEGEND = (
    "ideal: every slot busy from the first wake, nothing between waves; it and efficiency assume "
    "each job lasts the job length (--job-seconds) and each worker runs its slots (--slots) at "
    "once (docs/workers.md)."
)
# Jobs of the user's inputs (--input, --inputs) last what their handler takes: no length to
# build an ideal on, and one taken from the log's take-to-done spans would count the take's
# answer and the done report as the job's, the very overhead an efficiency is to show.
OWN_INPUTS_LEGEND = (
    "your inputs (--input, --inputs): jobbench does not know how long a job of them runs, so "
    "their scenario has no ideal and no efficiency; take to done is each job's run with the "
    "take's answer and the done report around it."
)
OWN_INPUTS_LINE = (
    "job length unknown: the jobs ran your inputs (--input, --inputs), so no ideal and no "
    "efficiency"
)
LIVE_LEGEND = (
    "time to X %: from the first accepted /run until X % of the jobs were seen ended "
    "(client-observed, late by up to one poll); throughput: completed jobs / time to 100 %; "
    "median / min / max: over the reps.",
    "delayTime, executionTime: the platform's own figures from /status (in the queue until a "
    "worker got the job; from then until done), not fake mode's queue wait and take to done; "
    "end-to-end: /run sent until its end was seen.",
)

PROFILE_LEGEND = (
    "an arrival profile's latencies (end-to-end, queue wait, time to X %) run from each job's "
    "intended submit time, so a late driver hides no queueing; "
    "steady: the jobs submitted from the end of the warm-up (detected by MSER-5, or the "
    "profile's warmup:D) to the last submission; rate in / out: their arrivals and completions "
    "a second; ideal steady e2e p99: a perfect dispatcher's for the same arrivals; a "
    "profile's efficiency: that ideal / its steady e2e p99; held: jobs that waited in a "
    "worker's buffer while another worker had a free slot (docs/load-profiles.md).",
)


def is_live(entry: ScenarioResult) -> bool:
    """A live endpoint's scenario: no workers of ours."""
    return entry.params.workers is None


def phase_title(phase: str, live: bool) -> str:
    """A phase's row name: `queue_wait`, `service` or `e2e` as this mode measures it."""
    return PHASE_NAMES[live][phase]


def legend(live: bool, profile: bool = False, own_inputs: bool = False) -> tuple[str, ...]:
    """What every figure of the run table is, one clause each (once, under the tables);
    `profile`: some scenario ran an arrival profile, whose steady rows need theirs;
    `own_inputs`: every scenario ran the user's inputs, so none has an ideal to explain."""
    table: tuple[str, ...] = LIVE_LEGEND
    if not live:
        table = (*FAKE_LEGEND, OWN_INPUTS_LEGEND if own_inputs else IDEAL_LEGEND)
    return table + (PROFILE_LEGEND if profile else ())


def ran_own_inputs(entry: ScenarioResult) -> bool:
    """Its jobs ran the user's inputs (--input, --inputs), whose length jobbench does not know."""
    return entry.params.inputs is not None


def jobs_text(entry: ScenarioResult) -> str:
    """`1024 jobs of 0.5 s`, or `16 jobs (your inputs)`, whose length is not known."""
    p = entry.params
    if ran_own_inputs(entry):
        return f"{p.burst} jobs (your inputs)"
    return f"{p.burst} jobs of {p.job_seconds} s"


def worker_title(entry: ScenarioResult) -> str:
    """Who ran the jobs: the worker kind, its policy and take-ahead (what tells two runs of the
    same scenario apart)."""
    p = entry.params
    if is_live(entry):
        return "live endpoint" + (f", submit rate {p.submit_rate}" if p.submit_rate else "")
    take_ahead = f"take-ahead {p.take_ahead}" if p.take_ahead else "no take-ahead"
    if p.worker == "model":
        return f"model worker, policy {p.policy}, {take_ahead}"
    if p.worker == "runpod":
        version = entry.sdk.version if entry.sdk else None
        if version is None:  # a checkout: the worker's own words name it (a git ref, a path)
            return entry.worker if p.take_ahead else f"{entry.worker}, {take_ahead}"
        return f"runpod SDK {version} worker, {take_ahead}"
    return f"command {p.worker!r}" if p.worker else entry.worker


def scenario_title(entry: ScenarioResult) -> str:
    """`1w-512j-0.5s · model worker, policy drain, no take-ahead · 1 x 32 slots`."""
    parts = [entry.name, worker_title(entry)]
    if entry.simulated:  # --target sim; a runpod worker ran as its model, which it names
        model = "" if entry.params.worker == "model" else f" by model {entry.simulated}"
        parts[-1] += f", simulated{model}"
    if not is_live(entry):
        slots = entry.params.slots
        fleet = "up to " if entry.params.fleet else ""
        parts.append(f"{fleet}{entry.params.workers} x {slots} slot" + ("" if slots == 1 else "s"))
    if entry.params.fleet:
        parts.append(fleet_settings_text(entry.params.fleet))
    return " · ".join(parts)


def fleet_settings_text(fleet: dict[str, Any]) -> str:
    """`autoscaled: queue-delay 4 s, 1 active, idle 5 s, cold start 0.5 s + the process's`."""
    value = float(fleet.get("scaler_value", 0))
    scaler = str(fleet.get("scaler"))
    known = SCALERS.get(scaler)
    rule = known.wording(value) if known is not None else f"{scaler} {value:g}"
    try:
        cold = parse_distribution(fleet.get("cold_start", 0), "cold_start").describe()
    except LatencySpecError:
        cold = "?"
    idle = float(fleet.get("idle_timeout_s", 0))
    return (
        f"autoscaled: {rule}, {fleet.get('active')} active, idle {idle:g} s, "
        f"cold start {cold} s + the process's start-up"
    )


def fleet_line(entry: ScenarioResult) -> str | None:
    """An autoscaled fleet's cost and scaling in words, over the reps (median); None for a
    fixed fleet. The ideal beside it assumes every worker polling from the burst's start."""
    fleets = [rep.fleet for rep in entry.reps if rep.fleet is not None]
    if not fleets:
        return None
    s = entry.summary

    def median(key: str, unit: str) -> str:
        figure = s.get(key)
        return fmt(figure.median if figure else None, unit)

    last = fleets[-1]
    if last.source == "health":  # a live endpoint: its size as /health counted it
        return (
            f"fleet (median over reps, from /health): {median('fleet_worker_s', 's')} billed "
            f"(workers running + idle, integrated), peak {median('fleet_peak_workers', '')} "
            f"workers, {median('fleet_cold_starts', '')} scale-ups seen, the first at "
            f"{median('fleet_first_scale_up_s', 's')}"
        )
    cold = last.cold_start_s or {}
    return (
        f"fleet (median over reps): {median('fleet_worker_s', 's')} billed, "
        f"{median('fleet_jobs_per_worker_s', 'ratio')} jobs per worker-second, "
        f"{median('fleet_cold_starts', '')} cold starts, first scale-up at "
        f"{median('fleet_first_scale_up_s', 's')}; last rep: cold start median "
        f"{fmt(cold.get('median'), 's')}, back to its active workers at {fmt(last.rest_s, 's')}; "
        "the ideal assumes all its workers polling from the start"
    )


def _mean_latency(entry: ScenarioResult, name: str) -> float | None:
    value = (entry.params.latency or {}).get(name)
    if value is None:
        return None
    written = value.as_written() if isinstance(value, LatencyDistribution) else value
    try:
        return parse_distribution(written, name).mean
    except LatencySpecError:  # a samples file's form the result cannot rebuild
        return None


def ideal_lines(entry: ScenarioResult) -> list[str]:
    """The ideal with its formula and this scenario's numbers, and the efficiency against what
    the latency model expects of each policy; none for a live endpoint (no ideal); for jobs of
    the user's inputs, why there is none."""
    p, ideal = entry.params, entry.ideal_s
    if ran_own_inputs(entry) and not is_live(entry):
        return [OWN_INPUTS_LINE]
    if is_profile(entry):
        return profile_ideal_lines(entry)
    if ideal is None or p.workers is None or p.slots is None:
        return []
    wake, take = _mean_latency(entry, "wake"), _mean_latency(entry, "take")
    line = f"ideal {fmt(ideal, 's')} = wake + ceil(burst / (workers x slots)) x job"
    if wake is not None:
        line += f" = {wake:g} + ceil({p.burst} / ({p.workers} x {p.slots})) x {p.job_seconds:g}"
    efficiency = entry.summary.get("efficiency")
    median = efficiency.median if efficiency else None
    text = f"efficiency {fmt(median, '%')} = ideal / time to 99 %"
    if wake is not None and take is not None:
        text += " (100 %: the limit); " + _expected_text(entry, ideal, take, wake)
    return [line, text]


def _expected_text(entry: ScenarioResult, ideal: float, take: float, wake: float) -> str:
    """`the latency model expects drain 95.3% (this worker's policy), ...`, or why it has no
    figure for this scenario."""
    p = entry.params
    extra = (p.latency or {}).get(TAKE_EXTRA)
    if extra:
        return (
            f"the latency model has no figure for a take handed up to {extra} jobs more than "
            "it asked (take_extra): see the simulated prediction"
        )
    own = p.policy if p.worker == "model" else None
    policies = [*MODELLED, *([own] if own and own not in MODELLED + NO_CLOSED_FORM else [])]
    assert p.workers is not None and p.slots is not None  # ideal_lines shows none without them
    expected = []
    for policy in policies:
        time = expected_time_s(
            policy,
            burst=p.burst,
            workers=p.workers,
            slots=p.slots,
            job_seconds=p.job_seconds,
            take_s=take,
            wake_s=wake,
        )
        mine = " (this worker's policy)" if own == policy else ""
        expected.append(f"{policy} {fmt(ideal / time if time > 0 else None, '%')}{mine}")
    text = "the latency model expects " + ", ".join(expected)
    if own in NO_CLOSED_FORM:
        text += (
            f"; none for {own}, this worker's policy: its take sizes follow which comes first, "
            "a batch's ends or its 0.1 s re-check (the simulated prediction is its figure)"
        )
    return text


def profile_ideal_lines(entry: ScenarioResult) -> list[str]:
    """An arrival profile's ideal (measure/ideal_dispatch.py) and efficiency: `ideal steady
    e2e p99 0.550 s: a perfect dispatcher on 4 x 32 slots for the same arrivals`."""
    p, ideal = entry.params, entry.summary.get("steady_ideal_e2e_p99_s")
    if ideal is None or p.workers is None or p.slots is None:
        return []
    efficiency = entry.summary.get("efficiency")
    median = efficiency.median if efficiency else None
    return [
        f"ideal steady e2e p99 {fmt(ideal.median, 's')}: a perfect dispatcher on {p.workers} x "
        f"{p.slots} slots for the same arrivals (each job on the first free slot, a wake after "
        "it arrives)",
        f"efficiency {fmt(median, '%')} = ideal steady e2e p99 / steady e2e p99 (median)",
    ]


def predicted_line(entry: ScenarioResult) -> str | None:
    """The simulated figure beside the measured one (core/sim/predict.py): `predicted (simulated
    drain model): time to 99 % 0.560 s; measured 0.585 s (median): harness +25 ms (+4.5 %)`.
    A model worker's gap is the harness's overhead; a runpod worker's is the SDK against its
    model (docs/simulation.md, "Predicted beside measured"). None: nothing predicted."""
    predicted = entry.predicted
    if predicted is None or predicted.time_to_p99_s is None:
        return None
    draws = f", median of {predicted.draws} draws" if predicted.draws > 1 else ""
    line = (
        f"predicted (simulated {predicted.policy} model{draws}): time to 99 % "
        f"{fmt(predicted.time_to_p99_s, 's')}"
    )
    measured = entry.summary.get("time_to_p99_s")
    if measured is None:
        return line
    gap = measured.median - predicted.time_to_p99_s
    share = f" ({gap / predicted.time_to_p99_s:+.1%})" if predicted.time_to_p99_s > 0 else ""
    who = "harness" if entry.params.worker == "model" else "the SDK against its model"
    return (
        f"{line}; measured {fmt(measured.median, 's')} (median): {who} {gap * 1000:+.0f} ms{share}"
    )


def gap_line(entry: ScenarioResult) -> str | None:
    """The gap to the ideal, explained: of the points of efficiency a burst's rep
    falls short of the ideal by, the latency model with this policy accounts for what its
    simulated figure loses (the policy-aware bound), the harness (or, for a runpod worker, the
    SDK against its model) for the rest:
    `21.5 % of the ideal: the latency model with the drain policy 78.0 points (its bound
    22.0 %), the harness 0.5 points`. None: no ideal or no simulated figure."""
    predicted, ideal = entry.predicted, entry.ideal_s
    measured = entry.summary.get("time_to_p99_s")
    if predicted is None or not predicted.time_to_p99_s or not ideal or measured is None:
        return None
    if not measured.median:
        return None
    bound = ideal / predicted.time_to_p99_s
    actual = ideal / measured.median
    who = "the harness" if entry.params.worker == "model" else "the SDK against its model"
    return (
        f"{actual:.1%} of the ideal: the latency model with the {predicted.policy} policy "
        f"{(1 - bound) * 100:.1f} points (its bound {bound:.1%}), {who} "
        f"{(bound - actual) * 100:.1f} points"
    )


def harness_line(entry: ScenarioResult) -> str | None:
    """The harness's own CPU in the last rep (procs/harness_cpu.py), in cores:
    `harness CPU (last rep, cores): queue 0.12, driver 0.02, 4 workers 0.40 (most 0.11),
    others 0.01; the machine 27% busy on 2 CPUs`. None: not measured (live, sim, older)."""
    cpu = entry.reps[-1].harness if entry.reps else None
    if cpu is None:
        return None
    workers = [float(v) for v in cpu.worker_cores.values() if v is not None]

    def cores(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    text = (
        f"harness CPU (last rep, cores): queue {cores(cpu.queue_cores)}, driver "
        f"{cores(cpu.driver_cores)}, {len(workers)} workers {sum(workers):.2f}"
        f"{f' (most {max(workers):.2f})' if workers else ''}, others {cores(cpu.others_cores)}"
    )
    if cpu.machine_busy_cores is not None and cpu.cpus:
        text += f"; the machine {cpu.machine_busy_cores / cpu.cpus:.0%} busy on {cpu.cpus} CPUs"
    return text


def refresh_line(entry: ScenarioResult) -> str | None:
    """Workers replaced at a job's asking (refresh_worker, docs/workers.md), rep by rep:
    `refreshed workers (refresh_worker) per rep: 2, 2, 3; each a stop and a fresh process,
    inside the times above`. None when no rep had one."""
    counts = [rep.refreshes or 0 for rep in entry.reps]
    if not any(counts):
        return None
    return (
        f"refreshed workers (refresh_worker) per rep: {', '.join(map(str, counts))}; each a "
        "stop and a fresh process, inside the times above"
    )


def buffered_any(entry: ScenarioResult) -> bool:
    """Some rep had a job wait in a take-ahead buffer: the held rows and line have a say."""
    return any(rep.held is not None and rep.held.buffered_jobs for rep in entry.reps)


def held_line(entry: ScenarioResult) -> str | None:
    """Take-ahead's cost in words (measure/held.py), over the reps; None when no job of any
    rep waited in a buffer.
    `held while a slot was free elsewhere: 37 jobs (median over reps), extra wait p99
    0.450 s; last rep: w0 30, w1 7 (of 120 buffered)`."""
    held = [rep.held for rep in entry.reps if rep.held is not None]
    if not buffered_any(entry):
        return None  # no job waited in any buffer: nothing to say
    jobs = sorted(h.jobs for h in held)[len(held) // 2]
    p99 = entry.summary.get("held_extra_wait_p99_s")
    last = held[-1]
    workers = ", ".join(f"{w} {h.jobs}" for w, h in last.per_worker.items() if h.jobs)
    text = f"held while a slot was free elsewhere: {jobs} jobs (median over reps)"
    if p99 is not None:
        text += f", extra wait p99 {fmt(p99.median, 's')}"
    return text + f"; last rep: {workers or 'none'} (of {last.buffered_jobs} buffered)"


def below_slots_lines(entry: ScenarioResult) -> list[str]:
    """A line per worker that ran fewer jobs at once than its declared slots in some rep
    (measure/concurrency.py), its last rep's figures and in how many reps: `worker w1 ran at
    most 1 job at once though --slots is 16: ... (3 of 3 reps)`."""
    last: dict[str, dict[str, Any]] = {}
    reps: dict[str, int] = {}
    for rep in entry.reps:
        for found in rep.below_slots or []:
            last[found.worker] = found.model_dump()
            reps[found.worker] = reps.get(found.worker, 0) + 1
    return [
        f"{below_slots_text(found)} ({reps[worker]} of {len(entry.reps)} reps)"
        for worker, found in sorted(last.items())
    ]
