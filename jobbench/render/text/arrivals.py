"""The words for an arrival profile's rep (core/real_workers/submit_pacer.py): how late the driver
sent its submissions, and the end-to-end latency, which is what a profile's rep is read by (a
burst's time to 99 % measures a drain; a steady rate's jobs end as they arrive)."""

from __future__ import annotations

from typing import Any


def pacing_line(figures: dict[str, Any]) -> str | None:
    """`50 jobs in 50 submissions, each late by p50 0.20 ms, p99 3.71 ms, max 5.45 ms; 1 jobs
    later than 2 ms; end-to-end p50 0.057 s, p99 0.063 s`; None for a burst."""
    pacing = figures.get("arrivals")
    if not pacing:
        return None
    ms = {key: pacing.get(f"lateness_{key}_s") for key in ("p50", "p99", "max")}
    late = ", ".join(
        f"{key} {value * 1000:.2f} ms" for key, value in ms.items() if value is not None
    )
    text = (
        f"{pacing['jobs']} jobs in {pacing['submissions']} submissions, each late by {late or '-'}"
        f"; {pacing['late_jobs']} jobs later than {pacing['late_bound_s'] * 1000:g} ms"
    )
    if pacing.get("not_sent"):
        text += f", {pacing['not_sent']} jobs never sent"
    e2e = (figures.get("phases") or {}).get("e2e") or {}
    if e2e.get("p50") is not None:
        text += f"; end-to-end p50 {e2e['p50']:.3f} s, p99 {e2e['p99']:.3f} s"
    return text


def steady_line(figures: dict[str, Any]) -> str | None:
    """`steady after 1.0 s: 40.0 jobs/s in, 39.8 out, end-to-end p50 0.551 s, p99 0.553 s`,
    or `SATURATED: ... the queue grew by 812 jobs`; None for a burst."""
    steady = figures.get("steady")
    if not steady:
        return None
    rate_in, rate_out = steady.get("arrival_rate_jps"), steady.get("completion_rate_jps")
    p50, p99 = steady.get("e2e_p50_s"), steady.get("e2e_p99_s")
    rates = f"{rate_in or 0:.1f} jobs/s in, {rate_out or 0:.1f} out"
    latency = "" if p50 is None else f", end-to-end p50 {p50:.3f} s, p99 {p99:.3f} s"
    how = "" if steady.get("warmup") != "set" else " (set)"
    head = f"steady after {steady['warmup_s']:.1f} s{how}: {rates}{latency}"
    if steady.get("ideal_e2e_p99_s") is not None and not steady.get("saturated"):
        head += f" (ideal p99 {steady['ideal_e2e_p99_s']:.3f} s)"
    if steady.get("saturated"):
        slope = steady.get("queue_trend_jps")
        trend = "" if slope is None else f" ({slope:+.1f} jobs/s)"
        return (
            f"SATURATED ({head}): the queue grew by {steady['queue_growth']} jobs{trend}; the "
            "offered rate exceeds what this fleet completes, so its latency only measures the "
            "backlog"
        )
    return head
