"""The error tree: each error carries its exit code and a one-line message naming the fix."""

from __future__ import annotations

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_USAGE = 2
EXIT_INCONCLUSIVE = 3
EXIT_RUN_FAILED = 4


class JobbenchError(Exception):
    exit_code = EXIT_USAGE


class UsageError(JobbenchError):
    """A flag or config value is wrong: the message names it and the fix."""

    exit_code = EXIT_USAGE


class ResultsError(JobbenchError):
    """A results file is missing, corrupt or of an unknown schema version."""

    exit_code = EXIT_USAGE


class RunFailed(JobbenchError):
    """The run could not complete: a worker died, jobs were lost, the target is unreachable."""

    exit_code = EXIT_RUN_FAILED


class WorkerError(RunFailed):
    """A worker process did not start or died; names it, its exit code and its stderr tail."""

    def __init__(self, worker: str, returncode: int | None, stderr_tail: str, what: str) -> None:
        self.worker = worker
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        code = "still running" if returncode is None else f"exit code {returncode}"
        tail = f"; stderr tail: {stderr_tail.strip()[-600:]}" if stderr_tail.strip() else ""
        super().__init__(f"worker {worker} {what} ({code}){tail}")


class CandidateFailed(RunFailed):
    """A comparison's candidate side cut its own rep short (a worker hung past the watchdog's
    give-up, died, or lost jobs): its behaviour, judged by the comparison (verdict/behaviour.py),
    not a run that could not be measured. The rep is saved, partial; the rows after it do not
    run."""


INTERRUPTED = "interrupted (Ctrl-C or SIGTERM)"


class Interrupted(RunFailed):
    """Ctrl-C: partial results were saved and marked incomplete."""

    exit_code = 130


def name_kept_logs(exc: JobbenchError, folders: list[str]) -> None:
    """A failure keeps its logs: its message says where, once (a message may name them already).
    The error keeps its class and exit code."""
    message = str(exc)
    missing = [folder for folder in folders if folder not in message]
    if missing and exc.args:
        exc.args = (f"{message}; logs kept in {', '.join(missing)}", *exc.args[1:])
