"""From `jobbench gate`'s exit code to the check's outcome, its annotation and the comment:
pass and inconclusive pass (the latter warns), a regression fails unless the PR carries the
accept label, and anything else fails with the gate's own code (docs/ci.md, "Exit codes and the
check")."""

from __future__ import annotations

from dataclasses import dataclass

VERDICTS = {"0": "pass", "1": "regression", "3": "inconclusive"}
INCONCLUSIVE_NOTE = "Inconclusive is a warning: the check passes."


@dataclass(frozen=True)
class Decision:
    gate_exit: str  # the gate's exit code, empty when it did not run
    verdict: str  # pass, regression, inconclusive, failed (the gate exited otherwise), none
    exit_code: int  # the check's
    accepted: bool  # a regression the accept label let through
    level: str | None  # the annotation's: error, warning or None
    title: str
    message: str


def decide(gate_exit: str, accept_label: str, labels: list[str]) -> Decision:
    """`gate_exit` is the gate step's output: empty when the gate did not run."""
    verdict = VERDICTS.get(gate_exit, "failed" if gate_exit else "none")
    if verdict == "pass":
        return Decision(gate_exit, verdict, 0, False, None, "", "")
    if verdict == "inconclusive":
        said = "unsettled by these reps, so it passes (job summary)"
        return Decision(gate_exit, verdict, 0, False, "warning", "perf gate inconclusive", said)
    if verdict == "regression":
        if accept_label and accept_label in labels:
            said = f"a regression, accepted by label {accept_label}: the check passes"
            return Decision(
                gate_exit, verdict, 0, True, "warning", "perf regression accepted", said
            )
        said = "slower than --max-regression (job summary)"
        return Decision(gate_exit, verdict, 1, False, "error", "perf regression", said)
    if verdict == "failed":
        code = int(gate_exit) if gate_exit.isdigit() else 1
        said = f"jobbench gate exited {gate_exit} (error above)"
        return Decision(gate_exit, verdict, code or 1, False, "error", "perf gate failed", said)
    said = "the gate did not run: an earlier step failed (above)"
    return Decision(gate_exit, verdict, 1, False, "error", "perf gate failed", said)


def comment_body(
    decision: Decision, gate_markdown: str | None, accept_label: str, run: str, suite: str = "gate"
) -> str:
    """The comment (and job summary): what the check did, the gate's own Markdown, the run. A
    suite other than the default is named first: its comment stands beside the default's."""
    parts = [] if suite in ("", "gate") else [f"**Suite `{suite}`**"]
    if decision.accepted:
        parts.append(
            f"**Accepted by label `{accept_label}`**: the regression below is reported, and "
            "the check passes. Remove the label to fail on it again."
        )
    if gate_markdown and gate_markdown.strip():
        parts.append(gate_markdown.strip())
    elif decision.verdict == "none":
        parts.append("**jobbench perf gate: no verdict**: an earlier step failed.")
    else:
        said = f"`jobbench gate` exited {decision.gate_exit}"
        parts.append(f"**jobbench perf gate: no verdict**: {said}.")
    if decision.verdict == "inconclusive":
        parts.append(INCONCLUSIVE_NOTE)
    parts.append(f"[Run log and reports]({run})")
    return "\n\n".join(parts) + "\n"
