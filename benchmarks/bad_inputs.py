"""Bad input campaign: every command, fed what a user or a CI script gets wrong, must refuse it
with exit code 2 and one error line naming the flag (or TOML field) and the fix, before
anything starts: in seconds, no process left behind, nothing written.

Each case runs as its own process (its own session, a timeout) in a fresh folder holding the
fixture files below and, for TOML cases, a `jobbench.toml`; TMPDIR points into it, so a log
folder a run made shows up. A case passes when: exit 2; no "Traceback"; the error is one line
starting with "error:" (Click's and argparse's usage errors too: jobbench and `python -m
fake_queue` reword them); it names what the case says it must; it took under LIMIT_S; no
process carrying the case's marker is left; the folder and its TMPDIR are as they were. A keyed fake
queue (started here, not part of any case) stands in for a server or endpoint that needs a key.

    .venv/bin/python benchmarks/bad_inputs.py            # ~4 min on 2 cores
    .venv/bin/python benchmarks/bad_inputs.py -k hold    # only the cases whose name has "hold"

Prints one row per case (input -> exit, seconds, form, first line) and "N/M one-line exit 2";
exits 1 if any case fails. Figures: docs/reliability.md, "Bounds on input".
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import ROOT, server_process, table

LIMIT_S = 5.0  # "before anything starts": a refusal takes a CLI start, not a run
TIMEOUT_S = 30.0
MARKER = "BAD_INPUT_CASE"  # inherited by everything a case starts, workers included
KEY = "campaign-key-5f4e3d"
UNWRITABLE = "/proc/jobbench-no-such-folder"  # nobody can make a folder here, root included
UNREADABLE = "/proc/self/mem"  # opens, then every read fails (EIO), root included
RESULT = ROOT / "tests" / "unit" / "data" / "old-a.json"  # a valid saved result

# Written into every case's folder.
FIXTURES = {
    "not-json.json": "this is not JSON {",
    "list.json": "[1, 2, 3]",
    "schema.json": '{"schema": "jobbench.result/99", "label": "x"}',
    "fields.json": '{"schema": "jobbench.result/1", "label": "x", "scenarios": "none"}',
    "empty.jsonl": "\n",
    "words.jsonl": "{bad json\n",
    "words.txt": "0.1 fast 0.2\n",
    "negative.txt": "0.1 -0.2\n",
    "empty.txt": "",
    "FILE": "a file, not a folder\n",
    "h.py": "print('a user handler')\n",
    "comparison.json": '{"schema": "jobbench.comparison/1", "rows": 5}',
}


@dataclass(frozen=True)
class Case:
    name: str  # what is wrong, for the table
    argv: tuple[str, ...]  # after `jobbench` (or `python -m fake_queue` when `queue_module`)
    said: str  # the error must contain this: the flag or field it names
    toml: str | bytes | None = None  # jobbench.toml of the case's folder
    pyproject: str | None = None
    queue_module: bool = False
    env: dict[str, str] = field(default_factory=dict)


def run_(*args: str) -> tuple[str, ...]:
    """`jobbench run` with a small model-worker run around the bad flag: if a bad value were
    accepted, the run stays small (and the case fails on its exit code)."""
    base = ("--worker", "model", "--workers", "1", "--burst", "4", "--reps", "1")
    return ("run", *base, "--job-seconds", "0.01", *args)


def run_cases() -> list[Case]:
    return [
        Case("run --workers 0", run_("--workers", "0"), "--workers 0"),
        Case("run --workers -1", run_("--workers", "-1"), "--workers -1"),
        Case("run --workers 100000", run_("--workers", "100000"), "--workers 100000"),
        Case("run --workers 1025", run_("--workers", "1025"), "--workers 1025"),
        Case("run --workers 900 (memory)", run_("--workers", "900"), "--workers"),
        Case("run --workers 1e3", run_("--workers", "1e3"), "--workers"),
        Case("run --workers abc", run_("--workers", "abc"), "--workers"),
        Case("run --workers ''", run_("--workers", ""), "--workers"),
        Case("run --slots 0", run_("--slots", "0"), "--slots 0"),
        Case("run --slots 10000000", run_("--slots", "10000000"), "--slots 10000000"),
        Case("run --slots 4097", run_("--slots", "4097"), "--slots 4097"),
        Case("run --burst 0", run_("--burst", "0"), "--burst 0"),
        Case("run --burst -5", run_("--burst", "-5"), "--burst -5"),
        Case("run --burst 100000000", run_("--burst", "100000000"), "--burst 100000000"),
        Case("run --burst 1000001", run_("--burst", "1000001"), "--burst 1000001"),
        Case("run --burst 2.5", run_("--burst", "2.5"), "--burst"),
        Case("run --take-ahead -1", run_("--take-ahead", "-1"), "--take-ahead -1"),
        Case(
            "run --take-ahead 100000",
            run_("--policy", "take-ahead", "--take-ahead", "100000"),
            "--take-ahead 100000",
        ),
        Case("run --job-seconds -1", run_("--job-seconds", "-1"), "--job-seconds -1"),
        Case("run --job-seconds nan", run_("--job-seconds", "nan"), "--job-seconds nan"),
        Case("run --job-seconds inf", run_("--job-seconds", "inf"), "--job-seconds inf"),
        Case("run --job-seconds 1e9", run_("--job-seconds", "1e9"), "--job-seconds 1e+09"),
        Case("run --job-seconds abc", run_("--job-seconds", "abc"), "--job-seconds"),
        Case("run --reps 0", run_("--reps", "0"), "--reps 0"),
        Case("run --reps -1", run_("--reps", "-1"), "--reps -1"),
        Case("run --reps 100000", run_("--reps", "100000"), "--reps 100000"),
        Case("run --label ''", run_("--label", ""), "--label"),
        Case("run --label a/b", run_("--label", "a/b"), "--label"),
        Case("run --label .hidden", run_("--label", ".hidden"), "--label"),
        Case("run --worker foo", run_("--worker", "foo"), "--worker 'foo'"),
        Case("run --worker ''", run_("--worker", ""), "--worker"),
        Case("run --policy bogus", run_("--policy", "bogus"), "--policy 'bogus'"),
        Case("run --policy take-ahead, no K", run_("--policy", "take-ahead"), "--take-ahead"),
        Case(
            "run --policy drain --take-ahead 4",
            run_("--policy", "drain", "--take-ahead", "4"),
            "--take-ahead 4",
        ),
        Case(
            "run --worker runpod --policy drain",
            run_("--worker", "runpod", "--policy", "drain"),
            "--policy",
        ),
        Case(
            "run user command --take-ahead 3",
            run_("--worker", "python h.py", "--take-ahead", "3"),
            "--take-ahead",
        ),
        Case(
            "run --sdk /nonexistent",
            run_("--worker", "runpod", "--sdk", "/nonexistent/sdk"),
            "--sdk",
        ),
        Case(
            "run --python /nonexistent",
            run_("--worker", "runpod", "--python", "/nonexistent/python"),
            "--python",
        ),
        Case("run --input '{bad'", run_("--input", "{bad"), "--input"),
        Case(
            "run --input and --inputs",
            run_("--input", "{}", "--inputs", "empty.jsonl"),
            "--input and --inputs",
        ),
        Case("run --inputs missing", run_("--inputs", "missing.jsonl"), "--inputs missing.jsonl"),
        Case("run --inputs empty", run_("--inputs", "empty.jsonl"), "--inputs empty.jsonl"),
        Case("run --inputs not JSON", run_("--inputs", "words.jsonl"), "--inputs words.jsonl"),
        Case("run --inputs a folder", run_("--inputs", "."), "--inputs ."),
        Case("run --inputs unreadable", run_("--inputs", UNREADABLE), "--inputs"),
        Case("run --take-latency -1", run_("--take-latency", "-1"), "--take-latency"),
        Case("run --take-latency abc", run_("--take-latency", "abc"), "--take-latency"),
        Case("run --take-latency ''", run_("--take-latency", ""), "--take-latency"),
        Case("run uniform:0.6,0.4", run_("--take-latency", "uniform:0.6,0.4"), "LOW > HIGH"),
        Case("run normal:0.5,-1", run_("--wake-latency", "normal:0.5,-1"), "SD < 0"),
        Case("run lognormal:50,1", run_("--take-latency", "lognormal:50,1"), "has a mean of"),
        Case("run gamma:1,2", run_("--take-latency", "gamma:1,2"), "unknown distribution 'gamma'"),
        Case("run uniform:1", run_("--take-latency", "uniform:1"), "two numbers"),
        Case("run --take-latency inf", run_("--take-latency", "inf"), "--take-latency"),
        Case("run --take-latency nan", run_("--take-latency", "nan"), "--take-latency"),
        Case("run --take-latency 1e9", run_("--take-latency", "1e9"), "--take-latency"),
        Case("run --hold -1", run_("--hold", "-1"), "--hold:"),
        Case("run --hold 0", run_("--hold", "0"), "--hold:"),
        Case("run --hold 1e9", run_("--hold", "1e9"), "--hold:"),
        Case(
            "run samples:missing", run_("--done-latency", "samples:missing.txt"), "--done-latency"
        ),
        Case("run samples:empty", run_("--done-latency", "samples:empty.txt"), "--done-latency"),
        Case("run samples:words", run_("--done-latency", "samples:words.txt"), "--done-latency"),
        Case("run samples:negative", run_("--done-latency", "samples:negative.txt"), "--done"),
        Case("run samples:unreadable", run_("--done-latency", f"samples:{UNREADABLE}"), "--done"),
        Case("run --seed abc", run_("--seed", "abc"), "--seed"),
        Case("run --out FILE", run_("--out", "FILE"), "--out FILE"),
        Case("run --out /proc", run_("--out", UNWRITABLE), "--out"),
        Case("run --html /proc", run_("--html", f"{UNWRITABLE}/x.html"), "--html"),
        Case("run --html a folder", run_("--html", "."), "--html"),
        Case("run --server no scheme", run_("--server", "localhost:8000"), "--server"),
        Case("run --server, no key", run_("--server", "{queue}"), "--api-key"),
        Case("run --submit-rate, fake", run_("--submit-rate", "5/s"), "--submit-rate"),
        Case("run --fault bogus", run_("--fault", "bogus"), "--fault"),
        Case("run --fault rate 2", run_("--fault", "job-done:500:2"), "--fault"),
        Case("run --fault teapot", run_("--fault", "job-done:teapot:0.1"), "--fault"),
        Case("run --fault no route", run_("--fault", "nowhere:500:0.1"), "--fault"),
        Case("run --worker-fault bogus", run_("--worker-fault", "bogus"), "--worker-fault"),
        Case("run --worker-fault kill:-1", run_("--worker-fault", "kill:-1"), "--worker-fault"),
        Case("run --worker-fault w9", run_("--worker-fault", "kill:1:w9"), "--worker-fault"),
        Case("run --frobnicate", run_("--frobnicate"), "--frobnicate"),
    ]


def live_(*args: str) -> tuple[str, ...]:
    return ("run", "--endpoint", "http://127.0.0.1:9/v2/x", "--burst", "4", "--reps", "1", *args)


def live_cases() -> list[Case]:
    key = {"RUNPOD_API_KEY": "dummy-key"}
    return [
        Case("live --endpoint 'not a url!'", ("run", "--endpoint", "not a url!"), "--endpoint"),
        Case(
            "live --endpoint credentials", ("run", "--endpoint", "http://u:p@h/v2/x"), "--endpoint"
        ),
        Case(
            "live --endpoint with route", ("run", "--endpoint", "http://h/v2/x/run"), "--endpoint"
        ),
        Case("live --endpoint ID, no key", ("run", "--endpoint", "abc123"), "--api-key"),
        Case("live keyed queue, no key", ("run", "--endpoint", "{endpoint}"), "no API key"),
        Case("live --server and --endpoint", live_("--server", "http://h:1"), "--server"),
        Case("live --fault", live_("--fault", "job-done:500:0.1"), "--fault"),
        Case("live --submit-rate abc", live_("--submit-rate", "abc"), "--submit-rate"),
        Case("live --submit-rate 0", live_("--submit-rate", "0"), "--submit-rate"),
        Case("live --burst 0", live_("--burst", "0"), "--burst 0"),
        Case("live --burst 2000000", live_("--burst", "2000000"), "--burst 2000000"),
        Case("live --reps 0", live_("--reps", "0"), "--reps 0"),
        Case("live --reps 100000", live_("--reps", "100000"), "--reps 100000"),
        Case("live --job-seconds -1", live_("--job-seconds", "-1"), "--job-seconds -1"),
        Case("live --label a/b", live_("--label", "a/b"), "--label"),
        Case("live --input '{bad'", live_("--input", "{bad"), "--input"),
        Case(
            "live 500 jobs, no --yes",
            ("run", "--endpoint", "abc123", "--burst", "500"),
            "--yes",
            env=key,
        ),
    ]


def compare_cases() -> list[Case]:
    saved = ("compare", "schema.json", "list.json")
    return [
        Case("compare missing files", ("compare", "a.json", "b.json"), "a.json"),
        Case("compare not JSON", ("compare", "not-json.json", "main"), "not-json.json"),
        Case("compare JSON list", ("compare", "list.json", "main"), "list.json"),
        Case("compare schema 99", ("compare", "schema.json", "main"), "schema.json"),
        Case("compare wrong fields", ("compare", "fields.json", "main"), "fields.json"),
        Case("compare unreadable file", ("compare", UNREADABLE, "main"), UNREADABLE),
        Case("compare two bad results", saved, "schema.json"),
        Case("compare --suite nosuch", ("compare", "main", "pr", "--suite", "nosuch"), "--suite"),
        Case("compare --reps 0", ("compare", "main", "pr", "--reps", "0"), "--reps"),
        Case("compare --reps 100000", ("compare", "main", "pr", "--reps", "100000"), "--reps"),
        Case("compare --reps abc", ("compare", "main", "pr", "--reps", "abc"), "--reps"),
        Case("compare --reps 1e3", ("compare", "main", "pr", "--reps", "1e3"), "--reps"),
        Case(
            "compare --max-reps 0",
            ("compare", "main", "pr", "--reps", "auto", "--max-reps", "0"),
            "--max-reps",
        ),
        Case(
            "compare --max-reps 100000",
            ("compare", "main", "pr", "--reps", "auto", "--max-reps", "100000"),
            "--max-reps",
        ),
        Case("compare --budget xyz", ("compare", "main", "pr", "--budget", "xyz"), "--budget"),
        Case("compare --budget 0", ("compare", "main", "pr", "--budget", "0"), "--budget"),
        Case("compare --format bogus", ("compare", "main", "pr", "--format", "bogus"), "--format"),
        Case("compare --metric bogus", ("compare", "main", "pr", "--metric", "bogus"), "--metric"),
        Case(
            "compare --max-regression abc",
            ("compare", "main", "pr", "--max-regression", "abc"),
            "--max-regression",
        ),
        Case(
            "compare --max-regression 2000%",
            ("compare", "main", "pr", "--max-regression", "2000%"),
            "--max-regression",
        ),
        Case("compare unknown variant", ("compare", "main", "nosuchvariant"), "nosuchvariant"),
        Case("compare --out /proc", ("compare", "main", "pr", "--out", UNWRITABLE), "--out"),
        Case(
            "compare --markdown /proc",
            ("compare", "main", "pr", "--markdown", f"{UNWRITABLE}/c.md"),
            "--markdown",
        ),
        Case("compare --html a folder", ("compare", "main", "pr", "--html", "."), "--html"),
        Case(
            "compare --repo missing", ("compare", "main", "v1", "--repo", "/nonexistent"), "--repo"
        ),
        Case("compare one name", ("compare", "main"), "'candidate'"),
        Case("gate missing files", ("gate", "a.json", "b.json"), "a.json"),
        Case("gate not JSON", ("gate", "not-json.json", "main"), "not-json.json"),
        Case(
            "gate --max-regression -5%", ("gate", "main", "pr", "--max-regression", "-5%"), "--max"
        ),
        Case("gate --max-regression 0", ("gate", "main", "pr", "--max-regression", "0"), "--max"),
        Case("gate --metric bogus", ("gate", "main", "pr", "--metric", "bogus"), "--metric"),
        Case("gate --reps 0", ("gate", "main", "pr", "--reps", "0"), "--reps"),
        Case("gate --format bogus", ("gate", "main", "pr", "--format", "bogus"), "--format"),
    ]


def suite_(body: str) -> str:
    return f"[suites.s]\n{body}\n"


ROW = '{name = "a", workers = 1, slots = 4, burst = 8, job_seconds = 0.05'


def row(extra: str) -> str:
    """A suite of one scenario row with `extra` fields added (a later key overrides)."""
    fields = dict(part.split(" = ") for part in ROW.strip("{").split(", "))
    for part in filter(None, extra.split(", ")):
        key, value = part.split(" = ", 1)
        fields[key] = value
    inner = ", ".join(f"{k} = {v}" for k, v in fields.items())
    return suite_(f"scenarios = [{{{inner}}}]")


def toml_cases() -> list[Case]:
    gate = ("gate", "main", "pr", "--suite", "s")
    variant = ("gate", "main", "v", "--suite", "s")
    ok = row("")

    def t(name: str, toml: str, said: str, argv: tuple[str, ...] = gate) -> Case:
        return Case(f"toml {name}", argv, said, toml=toml)

    return [
        t("not valid TOML", "[suites.s\nreps = ", "not valid TOML"),
        Case("toml not UTF-8", gate, "not valid TOML", toml=b"\xff\xfe not utf-8 \x00"),
        t("unknown top key", "colour = 1\n", "unknown key(s) ['colour']"),
        t("suites not tables", "suites = 3\n", "[suites] must hold tables"),
        t("scenarios empty", suite_("scenarios = []"), "scenarios must be a non-empty list"),
        t("scenarios missing", suite_("reps = 3"), "scenarios must be a non-empty list"),
        t("scenario unknown key", row("colour = 1"), "unknown key(s) ['colour']"),
        t("workers = 0", row("workers = 0"), "workers = 0"),
        t("workers = -3", row("workers = -3"), "workers = -3"),
        t("workers = 100000", row("workers = 100000"), "workers = 100000"),
        t("workers = 'four'", row('workers = "four"'), "workers = 'four'"),
        t("workers = 2.5", row("workers = 2.5"), "workers = 2.5"),
        t("workers = true", row("workers = true"), "workers = True"),
        t("workers = inf", row("workers = inf"), "workers = inf"),
        t("workers = 900 (memory)", row("workers = 900, burst = 1000000"), "workers = 900"),
        t("slots = 0", row("slots = 0"), "slots = 0"),
        t("slots = 10000000", row("slots = 10000000"), "slots = 10000000"),
        t("slots = 1e4", row("slots = 1e4"), "slots = 10000"),
        t("burst = 0", row("burst = 0"), "burst = 0"),
        t("burst = 100000000", row("burst = 100000000"), "burst = 100000000"),
        t("job_seconds = -1", row("job_seconds = -1"), "job_seconds = -1"),
        t("job_seconds = nan", row("job_seconds = nan"), "job_seconds = nan"),
        t("job_seconds = inf", row("job_seconds = inf"), "job_seconds = inf"),
        t("job_seconds = 1e9", row("job_seconds = 1e9"), "job_seconds = 1e+09"),
        t("job_seconds = 'slow'", row('job_seconds = "slow"'), "job_seconds = 'slow'"),
        t("reps = 0", ok + "reps = 0\n", "reps = 0"),
        t("reps = 100000", ok + "reps = 100000\n", "reps = 100000"),
        t("metric bogus", ok + 'metric = "speed"\n', "metric = 'speed'"),
        t("names twice", suite_(f"scenarios = [{ROW}}}, {ROW}}}]"), "given twice"),
        t("latency not a table", ok + "latency = 3\n", "latency must be a table"),
        t("latency unknown key", ok + "latency = {queue = 1}\n", "unknown key 'queue'"),
        t("latency uniform:0.6,0.4", ok + 'latency = {take = "uniform:0.6,0.4"}\n', "take:"),
        t("latency hold = 0", ok + "latency = {hold = 0}\n", "hold:"),
        t("latency take = -1", ok + "latency = {take = -1}\n", "take:"),
        t("latency table kind", ok + 'latency = {take = {kind = "gamma"}}\n', "take:"),
        t("faults bogus", ok + 'faults = ["bogus"]\n', "faults"),
        t("faults not a list", ok + 'faults = "job-done:500:0.1"\n', "faults"),
        t("variant unknown key", ok + "[variants.v]\ncolour = 1\n", "colour", variant),
        t("variant worker bogus", ok + '[variants.v]\nworker = "foo"\n', "worker = 'foo'", variant),
        t(
            "variant policy bogus",
            ok + '[variants.v]\nworker = "model"\npolicy = "fast"\n',
            "policy = 'fast'",
            variant,
        ),
        t(
            "variant take_ahead = -1",
            ok + '[variants.v]\nworker = "model"\ntake_ahead = -1\n',
            "take_ahead = -1",
            variant,
        ),
        t(
            "variant take_ahead = 100000",
            ok + '[variants.v]\nworker = "model"\npolicy = "take-ahead"\ntake_ahead = 100000\n',
            "take_ahead = 100000",
            variant,
        ),
        t(
            "variant policy without K",
            ok + '[variants.v]\nworker = "model"\npolicy = "take-ahead"\n',
            "take_ahead",
            variant,
        ),
        t("variant sdk missing", ok + '[variants.v]\nsdk = "nowhere"\n', "sdk", variant),
        t("variant env bad", ok + "[variants.v]\nenv = {A = [1]}\n", "env", variant),
        t(
            "variant latency bad",
            ok + '[variants.v]\nworker = "model"\nlatency = {take = -1}\n',
            "take:",
            variant,
        ),
        Case(
            "toml pyproject [tool.jobbench] a string",
            gate,
            "[tool.jobbench] must be a table",
            pyproject='[tool]\njobbench = "seed"\n',
        ),
    ]


def report_cases() -> list[Case]:
    return [
        Case("report missing label", ("report", "nosuch", "--html", "r.html"), "nosuch"),
        Case("report not JSON", ("report", "not-json.json", "--html", "r.html"), "not-json.json"),
        Case("report JSON list", ("report", "list.json", "--html", "r.html"), "list.json"),
        Case("report schema 99", ("report", "schema.json", "--html", "r.html"), "schema.json"),
        Case("report wrong fields", ("report", "fields.json", "--html", "r.html"), "fields.json"),
        Case("report unreadable file", ("report", UNREADABLE, "--html", "r.html"), UNREADABLE),
        Case("report bad comparison", ("report", "comparison.json", "--html", "r.html"), "compar"),
        Case("report --html /proc", ("report", "x", "--html", f"{UNWRITABLE}/r.html"), "--html"),
        Case("report --html a folder", ("report", "x", "--html", "."), "--html"),
        Case("report no --html", ("report", "x"), "--html"),
        Case("report --rep abc", ("report", "x", "--html", "r.html", "--rep", "abc"), "--rep"),
        Case(
            "report --rep 0", ("report", "result.json", "--html", "r.html", "--rep", "0"), "--rep"
        ),
        Case(
            "report --rep 99", ("report", "result.json", "--html", "r.html", "--rep", "99"), "--rep"
        ),
        Case("report --out missing", ("report", "x", "--html", "r.html", "--out", "nowhere"), "x"),
    ]


def serve_cases(busy_port: str) -> list[Case]:
    cases = []
    for program, prefix, module in (
        ("serve", ("serve",), False),
        ("fake_queue", (), True),
    ):
        for name, args, said in (
            ("--port 99999", ("--port", "99999"), "--port"),
            ("--port -1", ("--port", "-1"), "--port"),
            ("--port abc", ("--port", "abc"), "--port"),
            ("--port in use", ("--port", busy_port), "--port"),
            ("--host unresolvable", ("--host", "no-such-host.invalid", "--port", "0"), "--host"),
            ("--hold -1", ("--hold", "-1"), "--hold"),
            ("--hold 0", ("--hold", "0"), "--hold"),
            ("uniform:0.6,0.4", ("--take-latency", "uniform:0.6,0.4"), "LOW > HIGH"),
            ("gamma:1,2", ("--wake-latency", "gamma:1,2"), "unknown distribution"),
            ("--fault bogus", ("--fault", "bogus"), "--fault"),
            ("--fault rate 2", ("--fault", "job-done:500:2"), "--fault"),
            ("--rate-limits bogus", ("--rate-limits", "bogus"), "--rate-limits"),
            ("--endpoint-id a/b", ("--endpoint-id", "a/b"), "--endpoint-id"),
            ("--config missing", ("--config", "missing.toml"), "--config"),
            ("--config not TOML", ("--config", "not-json.json"), "--config"),
            ("--config unreadable", ("--config", UNREADABLE), "--config"),
            ("--seed abc", ("--seed", "abc"), "--seed"),
            ("--max-connections 0", ("--max-connections", "0"), "--max-connections"),
            ("--idle-timeout -1", ("--idle-timeout", "-1"), "--idle-timeout"),
        ):
            argv = (*prefix, *args)
            cases.append(Case(f"{program} {name}", argv, said, queue_module=module))
    return cases


def workers_(*args: str) -> tuple[str, ...]:
    return ("workers", "--server", "{queue}", "--api-key", KEY, "--worker", "model", *args)


def workers_cases() -> list[Case]:
    return [
        Case("workers no --server", ("workers", "--worker", "model"), "--server"),
        Case("workers --server no scheme", ("workers", "--server", "localhost:8000"), "--server"),
        Case("workers keyed queue, no key", ("workers", "--server", "{queue}"), "--api-key"),
        Case("workers --workers 0", workers_("--workers", "0"), "--workers 0"),
        Case("workers --workers 100000", workers_("--workers", "100000"), "--workers 100000"),
        Case("workers --workers 900 (memory)", workers_("--workers", "900"), "--workers"),
        Case("workers --slots 0", workers_("--slots", "0"), "--slots 0"),
        Case("workers --slots 10000000", workers_("--slots", "10000000"), "--slots 10000000"),
        Case("workers --take-ahead -1", workers_("--take-ahead", "-1"), "--take-ahead -1"),
        Case(
            "workers --take-ahead 100000",
            workers_("--policy", "take-ahead", "--take-ahead", "100000"),
            "--take-ahead 100000",
        ),
        Case("workers --worker foo", workers_("--worker", "foo"), "--worker"),
    ]


def locust_(*args: str) -> tuple[str, ...]:
    base = ("--headless", "--run-time", "2s", "--worker", "model", "--workers", "1")
    return ("locust", *base, *args)


def locust_cases() -> list[Case]:
    return [
        Case("locust --workers 0", locust_("--workers", "0"), "--workers 0"),
        Case("locust --workers 100000", locust_("--workers", "100000"), "--workers 100000"),
        Case("locust --slots 10000000", locust_("--slots", "10000000"), "--slots 10000000"),
        Case("locust --job-seconds -1", locust_("--job-seconds", "-1"), "--job-seconds -1"),
        Case("locust --max-fail-ratio 2", locust_("--max-fail-ratio", "2"), "--max-fail-ratio"),
        Case("locust --users 0", locust_("--users", "0"), "--users"),
        Case("locust --spawn-rate 0", locust_("--spawn-rate", "0"), "--spawn-rate"),
        Case("locust --spawn-rate nan", locust_("--spawn-rate", "nan"), "--spawn-rate"),
        Case("locust --web-port 99999", locust_("--web-port", "99999"), "--web-port"),
        Case("locust --processes 0", locust_("--processes", "0"), "--processes"),
        Case("locust --payload-bytes -1", locust_("--payload-bytes", "-1"), "--payload-bytes"),
        Case("locust --payload-bytes 1e9", locust_("--payload-bytes", "1000000000"), "--payload"),
        Case("locust --workers 900 (memory)", locust_("--workers", "900"), "--workers 900"),
        Case("locust --run-time bogus", locust_("--run-time", "soon"), "--run-time"),
        Case("locust --input '{bad'", locust_("--input", "{bad"), "--input"),
        Case("locust --endpoint bad", locust_("--endpoint", "not a url!"), "--endpoint"),
        Case("locust uniform:0.6,0.4", locust_("--take-latency", "uniform:0.6,0.4"), "LOW > HIGH"),
        Case("locust --hold -1", locust_("--hold", "-1"), "--hold:"),
    ]


# ---- running one case ---------------------------------------------------------------------


@dataclass
class Outcome:
    case: Case
    code: int | None  # None: killed at the timeout
    seconds: float
    stderr: str
    started: list[str]  # queues, workers or Locust it started (command lines)
    left: list[int]  # processes of the case still alive after it exited
    written: list[str]  # files or folders it left behind

    @property
    def lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]

    @property
    def form(self) -> str:
        """one-line, usage (a Usage: block such as Click's or argparse's), or how many lines."""
        lines = self.lines
        if len(lines) == 1 and lines[0].startswith("error:"):
            return "one-line"
        if lines and lines[0].lower().startswith("usage:"):
            return "usage"
        return f"{len(lines)} lines"

    @property
    def message(self) -> str:
        return self.lines[-1] if self.lines else ""

    def problems(self) -> list[str]:
        found = []
        if self.code != 2:
            found.append(f"exit {self.code}")
        if "Traceback" in self.stderr:
            found.append("traceback")
        if self.form != "one-line":
            found.append(self.form)
        if self.case.said not in self.message:
            found.append(f"does not name {self.case.said!r}")
        if self.seconds > LIMIT_S:
            found.append(f"took {self.seconds:.1f} s")
        if self.started:
            found.append(f"started {len(self.started)} processes")
        if self.left:
            found.append(f"left {len(self.left)} processes")
        if self.written:
            found.append(f"wrote {', '.join(self.written[:3])}")
        return found


def marked(marker: str) -> list[int]:
    """Processes whose environment carries `marker` (every process a case started does)."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):  # gone already
            os.killpg(os.getpgid(pid), signal.SIGKILL)


def listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def prepare(folder: Path, case: Case) -> None:
    for name, text in FIXTURES.items():
        (folder / name).write_text(text)
    if case.toml is not None:
        toml = case.toml if isinstance(case.toml, bytes) else case.toml.encode()
        (folder / "jobbench.toml").write_bytes(toml)
    (folder / "result.json").write_text(RESULT.read_text())
    if case.pyproject is not None:
        (folder / "pyproject.toml").write_text(case.pyproject)
    (folder / ".tmp").mkdir()


def case_env(case: Case, folder: Path, marker: str) -> dict[str, str]:
    """No key or endpoint of the caller's; TMPDIR in the case's folder; the marker."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "JOBBENCH_"))}
    env.update(CI="true", PYTHONPATH=str(ROOT), TMPDIR=str(folder / ".tmp"), **case.env)
    env[MARKER] = marker
    return env


STARTS = ("fake_queue", "policy_worker", "runpod_entry", "locust", "h.py")  # what a run starts


class Watcher(threading.Thread):
    """While a case runs: every process it starts that is a queue, a worker or Locust."""

    def __init__(self, marker: str, main_pid: int) -> None:
        super().__init__(daemon=True)
        self.marker, self.main_pid = marker, main_pid
        self.started: set[str] = set()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            for pid in marked(self.marker):
                if pid != self.main_pid and any(word in cmdline(pid) for word in STARTS):
                    self.started.add(cmdline(pid))


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def run_case(case: Case, index: int, root: Path, fill: dict[str, str]) -> Outcome:
    folder = root / f"case-{index:03d}"
    folder.mkdir()
    prepare(folder, case)
    before = listing(folder)
    marker = f"{os.getpid()}-{index}"
    program = ["-m", "fake_queue"] if case.queue_module else ["-m", "jobbench"]
    argv = [sys.executable, *program, *(fill.get(arg, arg) for arg in case.argv)]
    began = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=folder,
        env=case_env(case, folder, marker),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    watcher = Watcher(marker, proc.pid)
    watcher.start()
    code, err = finish(proc)
    seconds = time.monotonic() - began
    time.sleep(0.1)  # a child that outlived its parent is still alive now
    watcher.done.set()
    watcher.join()
    left = marked(marker)
    kill(left)
    tmp = [f".tmp/{p.name}" for p in (folder / ".tmp").iterdir()]
    written = sorted(listing(folder) - before) + tmp
    return Outcome(case, code, seconds, err, sorted(watcher.started), left, written)


def finish(proc: subprocess.Popen[str]) -> tuple[int | None, str]:
    """Its exit code (None: killed at the timeout) and its stderr."""
    try:
        _, err = proc.communicate(timeout=TIMEOUT_S)
        return proc.returncode, err
    except subprocess.TimeoutExpired:
        kill([proc.pid])
        return None, proc.communicate()[1]


# ---- the campaign -------------------------------------------------------------------------


def all_cases(busy_port: str) -> list[Case]:
    return [
        *run_cases(),
        *live_cases(),
        *compare_cases(),
        *toml_cases(),
        *report_cases(),
        *serve_cases(busy_port),
        *workers_cases(),
        *locust_cases(),
    ]


def machine_line() -> str:
    mem = next(
        (
            line.split()[1]
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemAvailable:")
        ),
        "?",
    )
    return (
        f"machine: {os.cpu_count()} CPUs, {int(mem) / 2**20:.1f} GB available, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"Linux {platform.release()}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="run only the cases whose name has this")
    args = parser.parse_args()
    print(machine_line())
    outcomes = []
    # A fake queue that needs KEY: the server or endpoint a case gives no key to, and a port
    # in use. It is no case's: its processes do not carry a case's marker.
    with server_process(["--api-key", KEY]) as queue:
        fill = {"{queue}": queue.url, "{endpoint}": queue.endpoint_url}
        cases = [case for case in all_cases(queue.url.rsplit(":", 1)[1]) if args.k in case.name]
        with tempfile.TemporaryDirectory(prefix="bad-inputs-") as tmp:
            for index, case in enumerate(cases):
                outcomes.append(run_case(case, index, Path(tmp), fill))
    return report(outcomes)


def report(outcomes: list[Outcome]) -> int:
    rows = []
    for o in outcomes:
        verdict = "; ".join(o.problems()) or "ok"
        first = o.message if len(o.message) <= 110 else o.message[:107] + "..."
        rows.append((o.case.name, o.code, f"{o.seconds:.2f}", o.form, verdict, first))
    print(table(("input", "exit", "s", "form", "verdict", "error (last line)"), rows))
    passed = [o for o in outcomes if not o.problems()]
    slowest = max(o.seconds for o in outcomes) if outcomes else 0.0
    groups: dict[str, list[bool]] = {}
    for o in outcomes:
        groups.setdefault(o.case.name.split(" ")[0], []).append(not o.problems())
    print("\nby command: " + ", ".join(f"{g} {sum(v)}/{len(v)}" for g, v in groups.items()))
    print(
        f"{len(passed)}/{len(outcomes)} one-line exit 2 (one 'error:' line naming the flag "
        f"or field and the fix); slowest "
        f"{slowest:.2f} s; queues, workers or Locust started "
        f"{sum(len(o.started) for o in outcomes)}; processes left "
        f"{sum(len(o.left) for o in outcomes)}; cases that wrote something "
        f"{sum(1 for o in outcomes if o.written)}"
    )
    return 0 if len(passed) == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
