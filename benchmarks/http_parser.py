"""The hand-written HTTP framing and loop against httptools (llhttp) and uvloop in their place:
the figures docs/architecture.md's choice rests on ("Hand-written HTTP framing and loop").

Variants, each in the queue's process and the model workers' alike:
  hand              as shipped: the fast lane frames its requests with fast_path.frame, the model
                    worker parses its answers with raw_http.parse_answer, both on precise_loop
  httptools         httptools.HttpRequestParser frames the lane's requests and
                    HttpResponseParser parses the worker's answers, a parser a call as the
                    functions they replace take a buffer (llhttp gives no offset where a
                    message ends, so its end is still found by hand, as the lane needs it)
  httptools-uvloop  the same, both processes on uvloop's loop in place of precise_loop's

Measures (the rounds interleave the variants):
  parse     microseconds to frame a take and a done request, and to parse a take's and a done's
            answer, in this process (the parser alone: uvloop changes nothing here)
  ceiling   jobs/s of `jobbench run --worker model --policy take-ahead --take-ahead 32 -s 32
            --job-seconds 0.02 --take-latency 0.005 --wake-latency 0.005 --hold 2 --reps 1`
            (16 workers and 60,000 jobs with --full), the queue pinned to a CPU of its own
  timer     benchmarks/timer_fidelity.py --scale full on the variant's queue: how late take
            answers go out, median / p99 (the medians over the passes), against its target
  overhead  benchmarks/reference_table.py's 8 cells (drain and take-ahead 32, 4 rows): the
            median of time to 99 % less the model's, in ms (--full only: minutes a variant)

    .venv/bin/python benchmarks/http_parser.py           # scaled down, no overhead: < 1 min
    .venv/bin/python benchmarks/http_parser.py --full    # the doc's: 3 rounds, 3 passes, 3 reps

A variant reaches the processes a run starts through the interpreter they start with: for each
measure sys.executable is a small script that applies the variant named in JOBBENCH_HTTP_VARIANT
and then runs `-m MODULE` as python does. Needs httptools and uvloop in the venv, which no
package of jobbench declares (`uv pip install -p .venv httptools uvloop`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fake_queue.api import Distribution, LatencyModel
from fake_queue.http import fast_path, lane_handler
from fake_queue.http.fast_path import (
    JSON_UTF8,
    MAX_BODY_BYTES,
    MAX_HEAD_BYTES,
    NOT_PLAIN,
    Framed,
    Reply,
    Unframeable,
)
from jobbench.workers import raw_http
from jobbench.workers.raw_http import Answer

HERE = Path(__file__).resolve().parent
VARIANT_ENV = "JOBBENCH_HTTP_VARIANT"
VARIANTS = {
    "hand": "hand-written",
    "httptools": "httptools (llhttp)",
    "httptools-uvloop": "httptools + uvloop",
}
MEASURES = ("parse", "ceiling", "timer", "overhead")


# ---- the variants: what takes the hand-written code's place in a process --------------------
class _Whole(Exception):
    """Raised at a message's end: the bytes after it are the next message's."""


class _Parts:
    """What llhttp hands its callbacks for the first message of a buffer."""

    def __init__(self, parser_of: Callable[[Any], Any]) -> None:
        self.parser = parser_of(self)
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.body = bytearray()
        self.head_done = self.whole = self.keep = False
        self.version = ""
        self.start: bytes | int = b""  # a request's method, an answer's status

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        self.head_done = True
        self.keep = self.parser.should_keep_alive()
        self.version = self.parser.get_http_version()
        request = hasattr(self.parser, "get_method")
        self.start = self.parser.get_method() if request else self.parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        self.whole = True
        raise _Whole

    def feed(self, buffer: bytearray) -> str | None:
        """Parse up to the first message's end; what llhttp found wrong, or None."""
        import httptools

        try:
            self.parser.feed_data(bytes(buffer))
        except httptools.HttpParserUpgrade:
            return "upgrade"
        except httptools.HttpParserCallbackError as exc:
            return None if self.whole else str(exc)
        except httptools.HttpParserError as exc:
            return str(exc)
        return None

    def size(self, buffer: bytearray) -> int:
        """The message's bytes: llhttp says only that it ended, so the head's end is found by
        hand, then its body's length added."""
        return buffer.find(b"\r\n\r\n") + 4 + len(self.body)

    def header(self, name: bytes) -> str | None:
        values = [value for key, value in self.headers if key == name]
        return values[-1].decode("latin-1").strip() if values else None


def httptools_frame(buffer: bytearray) -> Framed | None:
    """fast_path.frame with llhttp reading the request."""
    import httptools

    parts = _Parts(httptools.HttpRequestParser)
    problem = parts.feed(buffer)
    if problem is not None:
        raise Unframeable(problem)
    if not parts.head_done:
        if len(buffer) > MAX_HEAD_BYTES:
            raise Unframeable("header section too long")
        return None
    names = [name for name, _ in parts.headers]
    if any(name.decode("latin-1") in NOT_PLAIN for name in names) or parts.version != "1.1":
        raise Unframeable("not plain")
    length = parts.header(b"content-length")
    if names.count(b"content-length") > 1 or int(length or 0) > MAX_BODY_BYTES:
        raise Unframeable("content-length")
    if not parts.whole:
        return None
    url = httptools.parse_url(parts.url)
    return Framed(
        method=bytes(parts.start).decode("latin-1"),
        path=url.path.decode("latin-1"),
        query=(url.query or b"").decode("latin-1"),
        closes=not parts.keep,
        has_host=b"host" in names,
        authorization=parts.header(b"authorization"),
        body=bytes(parts.body),
        size=parts.size(buffer),
    )


def httptools_parse_answer(
    buffer: bytearray, arrived: float = 0.0
) -> tuple[Answer, bool, int] | None:
    """raw_http.parse_answer with llhttp reading the answer."""
    import httptools

    parts = _Parts(httptools.HttpResponseParser)
    problem = parts.feed(buffer)
    if problem is not None:
        raise ValueError(f"not an HTTP/1.x answer: {problem}")
    if not parts.head_done:
        if len(buffer) > MAX_HEAD_BYTES:
            raise ValueError("header section too long")
        return None
    if parts.header(b"transfer-encoding") is not None:
        raise ValueError("chunked answers are not expected from the queue")
    if not parts.whole:
        return None
    content_type = (parts.header(b"content-type") or "").partition(";")[0].strip().lower()
    answer = Answer(int(parts.start), content_type, bytes(parts.body), arrived)
    return answer, parts.keep, parts.size(buffer)


def apply(variant: str) -> None:
    """Put the variant in this process's place of the hand-written code."""
    if variant == "hand":
        return
    fast_path.frame = httptools_frame
    lane_handler.frame = httptools_frame  # which imported it by name
    raw_http.parse_answer = httptools_parse_answer
    if variant == "httptools-uvloop":
        import uvloop

        import fake_queue.precise_loop as precise_loop

        # precise_loop.run makes its own loop (the queue's and a model worker's), whatever the
        # event loop policy says: the loop it makes is what must change.
        precise_loop.new_event_loop = uvloop.new_event_loop
        # The worker's connection checks it got an asyncio.Transport, which uvloop's are not
        # (they only act like one).
        raw_http._Connection.connection_made = _any_transport


def _any_transport(self: Any, transport: Any) -> None:
    self.transport = transport


# ---- the interpreter a run's processes start with --------------------------------------------
WRAPPER = """#!{python}
import sys
sys.path.insert(0, {here!r})
import http_parser
http_parser.run_as_python()
"""


def run_as_python() -> None:
    """`python -m MODULE ARGS` with the variant applied first (the queue's process and a model
    worker's); anything else runs as the real interpreter would run it."""
    args = sys.argv[1:]
    if len(args) < 2 or args[0] != "-m":
        os.execv(sys.executable, [sys.executable, *args])
    apply(os.environ.get(VARIANT_ENV, "hand"))
    module = args[1]
    sys.argv = [module, *args[2:]]
    sys.path.insert(0, os.getcwd())  # as -m puts it
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def in_place() -> str:
    """What frames the lane's requests, parses a worker's answers and makes their loop here."""
    from fake_queue import precise_loop

    return " ".join(
        (
            lane_handler.frame.__name__,
            raw_http.parse_answer.__name__,
            precise_loop.new_event_loop.__module__.split(".")[0],
        )
    )


IN_PLACE = {
    "hand": "frame parse_answer fake_queue",
    "httptools": "httptools_frame httptools_parse_answer fake_queue",
    "httptools-uvloop": "httptools_frame httptools_parse_answer uvloop",
}


@contextlib.contextmanager
def interpreter(variant: str, folder: Path) -> Iterator[str]:
    """sys.executable (what the queue and the workers are started with) applies `variant`,
    and this process keeps its CPUs (timer_fidelity pins it), until the block ends. A process
    started with it is asked first what it runs: a variant that did not take is no figure."""
    wrapper = folder / "python-variant"
    wrapper.write_text(WRAPPER.format(python=sys.executable, here=str(HERE)))
    wrapper.chmod(0o755)
    env = {**os.environ, VARIANT_ENV: variant}
    probe = [str(wrapper), "-m", "http_parser", "--in-place"]
    said = subprocess.run(probe, env=env, capture_output=True, text=True, check=True).stdout
    if said.strip() != IN_PLACE[variant]:
        raise RuntimeError(f"{variant}: its processes run {said.strip()!r}")
    real, cpus = sys.executable, os.sched_getaffinity(0)
    sys.executable, os.environ[VARIANT_ENV] = str(wrapper), variant
    try:
        yield str(wrapper)
    finally:
        sys.executable = real
        os.environ.pop(VARIANT_ENV, None)
        os.sched_setaffinity(0, cpus)


# ---- the measures ------------------------------------------------------------------------------
def _samples() -> dict[str, bytes]:
    """A model worker's take and done requests and the queue's answers to them, as sent."""
    head = "Host: 127.0.0.1:8000\r\nUser-Agent: jobbench-model-worker\r\nAuthorization: key\r\n"
    done = json.dumps({"output": {"ok": True}}).encode()
    jobs = [{"id": f"job-{i}", "input": {"seconds": 0.02}} for i in range(32)]
    reply = Reply()
    return {
        "take request": (
            "GET /v2/local/job-take-batch/w0?gpu=cpu&batch_size=32&job_in_progress=0 HTTP/1.1\r\n"
            f"{head}\r\n"
        ).encode(),
        "done request": (
            f"POST /v2/local/job-done/w0/job-0?gpu=cpu HTTP/1.1\r\n{head}charset: utf-8\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {len(done)}\r\n\r\n"
        ).encode()
        + done,
        "take answer": reply(200, json.dumps(jobs).encode()),
        "done answer": reply(200, b'{"acknowledged":true}', JSON_UTF8),
    }


def check_alike() -> None:
    """Both parsers read the samples, a partial one, two pipelined and a chunked one alike:
    the figures compare the same work."""
    samples = _samples()
    for name, raw in samples.items():
        hand, llhttp = (
            (fast_path.frame, httptools_frame)
            if "request" in name
            else (raw_http.parse_answer, httptools_parse_answer)
        )
        for buffer in (raw, raw[: len(raw) // 2], raw + raw):
            assert hand(bytearray(buffer)) == llhttp(bytearray(buffer)), name
    chunked = samples["done request"].replace(b"Content-Length", b"Transfer-Encoding: chunked\r\nX")
    for framing in (fast_path.frame, httptools_frame):
        with contextlib.suppress(Unframeable):
            framing(bytearray(chunked))
            raise AssertionError("a chunked request must be aiohttp's")


def parse_costs(number: int) -> dict[str, dict[str, float]]:
    """Microseconds a call, the best of 5 repeats of `number`, per sample and parser."""
    costs: dict[str, dict[str, float]] = {}
    for name, raw in _samples().items():
        pair = {
            "hand": fast_path.frame if "request" in name else raw_http.parse_answer,
            "httptools": httptools_frame if "request" in name else httptools_parse_answer,
        }
        costs[name] = {who: _best_us(fn, bytearray(raw), number) for who, fn in pair.items()}
    return costs


def _best_us(parse: Callable[[bytearray], Any], buffer: bytearray, number: int) -> float:
    best = min(timeit.repeat(lambda: parse(buffer), number=number, repeat=5))
    return best / number * 1e6


def _run(scenarios: tuple[Any, ...], reps: int, out: Path) -> Any:
    """One plan on the fake target, in this process, as `jobbench run` runs it."""
    from jobbench.core.real_workers.fake_target import FakeTarget
    from jobbench.core.run.loop import run_plans
    from jobbench.core.run.target_seam import Plan
    from jobbench.core.scenario.config import RunConfig
    from jobbench.render.text.plain_progress import PlainProgress

    config = RunConfig(scenarios=scenarios, reps=reps, out=out, quiet=True, save_events=False)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        (doc,) = run_plans([Plan(config, FakeTarget())], PlainProgress())
    return doc


def ceiling(workers: int, jobs: int, out: Path) -> tuple[float, float | None]:
    """(jobs/s, the machine's other processes' cores) of one ceiling rep."""
    from jobbench.core.scenario.config import Scenario
    from jobbench.workers.spec import WorkerSpec

    fast = Distribution("fixed", 0.005)
    scenario = Scenario(
        name="ceiling",
        workers=workers,
        slots=32,
        burst=jobs,
        job_seconds=0.02,
        worker=WorkerSpec(kind="model", policy="take-ahead", take_ahead=32),
        latency=LatencyModel(take=fast, wake=fast, hold=Distribution("fixed", 2.0)),
    )
    entry = _run((scenario,), 1, out).scenarios[0]
    (rep,) = entry.reps
    others = rep.harness.others_cores if rep.harness is not None else None
    return float(entry.summary["throughput_jps"].median), others


def timer(launcher: str, passes: int, rounds: int, out: Path) -> tuple[float, float, float]:
    """timer_fidelity.py at full scale on `launcher`'s queue: (median, p99) ms, the medians
    over the passes, and the machine's other processes' cores (the median pass's)."""
    import timer_fidelity

    raw = out / "timer.json"
    argv = ["--scale", "full", "--passes", str(passes), "--rounds", str(rounds)]
    with contextlib.redirect_stdout(io.StringIO()):
        timer_fidelity.main([*argv, "--launcher", launcher, "--json", str(raw)])
    results = json.loads(raw.read_text())
    figures = [
        timer_fidelity.summary(r["server"]["queued"] + r["server"]["woken"]) for r in results
    ]
    return (
        statistics.median(f["median"] for f in figures),
        statistics.median(f["p99"] for f in figures),
        statistics.median(r["cpu"]["others_cores"] for r in results),
    )


def overhead(reps: int, scale: float, out: Path) -> float:
    """Median over the 8 reference cells of time to 99 % less the model's, ms; `scale`
    multiplies every latency and job length (1: the reference table's)."""
    import reference_table

    rows = list(range(1, len(reference_table.ROWS) + 1))
    cells = []
    for policy in ("drain", "take-ahead"):
        spec = reference_table.VARIANTS[policy]
        doc = _run(reference_table.scenarios(rows, scale, spec), reps, out)
        for index, (_, workers, burst, job) in enumerate(reference_table.ROWS):
            model = reference_table.expected_time_s(
                policy, burst=burst, workers=workers, slots=32, job_seconds=job * scale,
                take_s=0.5 * scale, wake_s=0.05 * scale,
            )  # fmt: skip
            cells.append((reference_table.median_p99(doc, index) - model) * 1000)
    return statistics.median(cells)


# ---- the run and its table ---------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--full", action="store_true", help="the doc's scale and every measure")
    p.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated")
    p.add_argument("--measures", default=None, help="comma-separated (default: all but overhead)")
    p.add_argument("--rounds", type=int, default=None, help="ceiling runs a variant (1; 3)")
    p.add_argument("--workers", type=int, default=16, help="ceiling workers (16)")
    p.add_argument("--jobs", type=int, default=None, help="ceiling jobs (10,000; 60,000)")
    p.add_argument("--passes", type=int, default=None, help="timer passes a variant (1; 3)")
    p.add_argument("--timer-rounds", type=int, default=None, help="a pass's rounds (3; 12)")
    p.add_argument("--reps", type=int, default=3, help="overhead reps a cell (3)")
    p.add_argument("--scale", type=float, default=1.0, help="overhead cells' latencies x (1)")
    args = p.parse_args(argv)
    full = args.full
    args.rounds = args.rounds or (3 if full else 1)
    args.jobs = args.jobs or (60_000 if full else 10_000)
    args.passes = args.passes or (3 if full else 1)
    args.timer_rounds = args.timer_rounds or (12 if full else 3)
    args.variants = args.variants.split(",")
    args.measures = (args.measures or ",".join(MEASURES[: 4 if full else 3])).split(",")
    for given, known in ((args.variants, VARIANTS), (args.measures, MEASURES)):
        if unknown := [name for name in given if name not in known]:
            p.error(f"unknown {unknown}; use {', '.join(known)}")
    return args


def main(argv: list[str] | None = None) -> int:
    if (argv if argv is not None else sys.argv[1:]) == ["--in-place"]:  # interpreter's probe
        print(in_place())
        return 0
    # Imported here, not above: the queue and every worker a measure starts import this module
    # (run_as_python), and need none of the run's machinery.
    import timer_fidelity
    from common import print_machine

    args = parse_args(argv)
    try:
        import httptools  # noqa: F401
        import uvloop  # noqa: F401
    except ImportError as exc:
        print(f"http_parser.py: {exc}; uv pip install -p .venv httptools uvloop", file=sys.stderr)
        return 2
    print_machine()
    check_alike()
    variants, measures = args.variants, args.measures
    out = Path(tempfile.mkdtemp(prefix="jb-http-"))
    rows: dict[str, dict[str, str]] = {}
    if "parse" in measures:
        costs = parse_costs(5_000)
        for name, by in costs.items():
            title = f"parse: {name}, us a call (best of 5 x 5,000)"
            rows[title] = {v: f"{by['hand' if v == 'hand' else 'httptools']:.1f}" for v in variants}
    if "ceiling" in measures:
        runs: dict[str, list[float]] = {v: [] for v in variants}
        for _ in range(args.rounds):
            for variant in variants:
                with interpreter(variant, out):
                    jobs_s, others = ceiling(args.workers, args.jobs, out)
                runs[variant].append(jobs_s)
                cores = "?" if others is None else f"{others:.2f}"
                print(f"ceiling {variant}: {jobs_s:,.0f} jobs/s (others {cores} cores)")
        title = (
            f"ceiling, jobs/s ({args.workers} workers, {args.jobs:,} jobs; "
            f"{args.rounds} runs interleaved, median)"
        )
        rows[title] = {v: f"{statistics.median(r):,.0f}" for v, r in runs.items()}
    if "timer" in measures:
        title = (
            f"timer fidelity, take answers: median / p99 late ({args.passes} passes of "
            f"{args.timer_rounds} rounds)"
        )
        rows[title] = {}
        for variant in variants:
            with interpreter(variant, out) as python:
                launcher = f"{python} -m fake_queue"
                median, p99, others = timer(launcher, args.passes, args.timer_rounds, out)
            met = "met" if timer_fidelity.meets(median, p99) else "**missed**"
            rows[title][variant] = f"{median:.3f} / {p99:.3f} ms, {met}"
            print(f"timer {variant}: {rows[title][variant]} (others {others:.2f} cores)")
    if "overhead" in measures:
        scaled = "" if args.scale == 1 else f", latencies x {args.scale:g}"
        title = f"harness overhead, 8 reference cells ({args.reps} reps{scaled}, median)"
        rows[title] = {}
        for variant in variants:
            with interpreter(variant, out):
                rows[title][variant] = f"{overhead(args.reps, args.scale, out):+.1f} ms"
            print(f"overhead {variant}: {rows[title][variant]}")
    print(f"\n| benchmark | {' | '.join(VARIANTS[v] for v in variants)} |")
    print(f"|---|{'---|' * len(variants)}")
    for title, cells in rows.items():
        print(f"| {title} | {' | '.join(cells.get(v, '-') for v in variants)} |")
    print(f"\nresults in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
