"""The workers' own disk writes (procs/disk_writes.py, measure/disk_writes.py; docs/metrics.md
"The workers' disk writes"): read from /proc/<pid>/io per process group, left out where they
cannot be read, carried into the rep and its comparison figure, and a rep over the threshold
flagged as the `disk_writes` behaviour the behaviour check judges."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobbench.core.real_workers.fake_target import note_rep_end
from jobbench.core.real_workers.rep_drive import RepEnd
from jobbench.measure.disk_writes import (
    DISK_KIND,
    KIB,
    THRESHOLD_KIB,
    disk_anomalies,
    write_kib_per_job,
    writes_over,
)
from jobbench.measure.metrics import rep_measure
from jobbench.procs import disk_writes
from jobbench.results.model import Rep
from jobbench.results.rep_metrics import METRICS, worker_write_kib_per_job
from jobbench.verdict.behaviour import WORDS, judge_behaviour, rep_behaviour
from jobbench.verdict.row_checks import FIGURE_RULES

IO = "rchar: 10\nwchar: 20\nsyscw: 2\nread_bytes: 0\nwrite_bytes: {}\ncancelled_write_bytes: 0\n"


def test_write_bytes_is_read_from_its_line_of_proc_pid_io() -> None:
    assert disk_writes.io_write_bytes(IO.format(8192)) == 8192
    with pytest.raises(ValueError):
        disk_writes.io_write_bytes("rchar: 10\n")


def test_a_group_not_readable_whole_is_left_out_never_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A /proc whose entry for this process has no write_bytes (not ours to read): the group
    it belongs to has no figure; without /proc/self/io (no I/O accounting) none has."""
    (tmp_path / "self").mkdir()
    (tmp_path / "self" / "io").write_text(IO.format(0))
    (tmp_path / str(os.getpid())).mkdir()
    (tmp_path / str(os.getpid()) / "io").write_text("rchar: 10\n")
    monkeypatch.setattr(disk_writes, "PROC", tmp_path)
    assert disk_writes.group_write_bytes({"me": os.getpgid(0)}) == {}
    (tmp_path / str(os.getpid()) / "io").write_text(IO.format(12288))
    assert disk_writes.group_write_bytes({"me": os.getpgid(0)}) == {"me": 12288}
    (tmp_path / "self" / "io").unlink()
    assert disk_writes.group_write_bytes({"me": os.getpgid(0)}) == {}


def test_the_rep_counts_each_workers_writes_from_the_start_or_from_its_own_start() -> None:
    start = {"w0": 4096, "w1": 8192, "gone": 4096}  # gone exited: left out at the end
    end = {"w0": 12288, "w1": 8192, "scaled": 4096}
    assert writes_over(start, end) == {"scaled": 4096, "w0": 8192, "w1": 0}
    assert writes_over(start, {}) is None  # none read at the end: no figure, not 0


def test_per_job_and_the_threshold() -> None:
    assert write_kib_per_job({"w0": 8 * KIB, "w1": 8 * KIB}, 8) == 2.0
    assert write_kib_per_job(None, 8) is None and write_kib_per_job({"w0": 1}, 0) is None
    at = {"w0": round(THRESHOLD_KIB * KIB * 100)}
    assert disk_anomalies(at, 100) == []  # at the threshold: not flagged
    (over,) = disk_anomalies({"w0": at["w0"] + 2 * KIB}, 100)
    assert over["kind"] == DISK_KIND and "KiB to disk a completed job" in over["what"]
    assert disk_anomalies(None, 100) == [] and disk_anomalies({"w0": 10**9}, 0) == []


def _rep(ended: RepEnd) -> Rep:
    """A measured rep of 4 completed jobs, with what its end added."""
    t0 = 3_000_000_000
    log = [{"t": t0, "ev": "submit", "job": f"j{i}"} for i in range(4)]
    for i in range(4):
        log += [{"t": t0 + 10**6, "ev": k, "job": f"j{i}", "take": 1, "worker": "w0"}
                for k in ("claim", "deliver")]  # fmt: skip
        log.append({"t": t0 + 10**8, "ev": "done", "job": f"j{i}", "status": "COMPLETED",
                    "worker": "w0"})  # fmt: skip
    figures = rep_measure(log, workers=1, slots=4, burst=4, job_seconds=0.1,
                          wake_latency_s=0.05).figures  # fmt: skip
    note_rep_end(figures, ended)
    return Rep.model_validate(figures)


def test_a_rep_over_the_threshold_carries_its_figure_and_the_behaviour() -> None:
    written = RepEnd(worker_write_bytes={"w0": 4 * 4096})  # a page a job: 4 KiB a job
    rep = _rep(written)
    assert rep.worker_write_bytes == {"w0": 16384}
    assert worker_write_kib_per_job(rep) == 4.0
    assert rep_behaviour(rep) == {DISK_KIND}
    quiet = _rep(RepEnd(worker_write_bytes={"w0": 1024}))  # a log line or two
    assert worker_write_kib_per_job(quiet) == 0.25 and rep_behaviour(quiet) == set()
    unread = _rep(RepEnd())
    assert unread.worker_write_bytes is None and worker_write_kib_per_job(unread) is None


def test_the_figure_is_compared_where_measured_and_judged_only_as_a_behaviour() -> None:
    metric = METRICS["worker_write_kib_per_job"]
    assert metric.where_measured and not metric.outliers
    assert "worker_write_kib_per_job" not in {rule.metric for rule in FIGURE_RULES}


def test_writing_on_every_rep_where_the_baseline_never_did_is_a_regression() -> None:
    found = judge_behaviour({}, {DISK_KIND: 10}, (10, 10), 1e-4)
    assert found is not None and found.verdict == "regression"
    assert found.reason.startswith(f"behaviour: {WORDS[DISK_KIND]} in 10 of 10 reps, baseline 0")
    both = judge_behaviour({DISK_KIND: 10}, {DISK_KIND: 10}, (10, 10), 1e-4)
    assert both is not None and both.verdict == "pass"  # the baseline's own: not more often
