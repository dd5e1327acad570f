"""Arrival profiles: the spelling of a Load on the command line and in suites, and
the intended submit time of every job it makes. One profile is one or more stages, joined by
`,`, each starting when the one before ends (k6's stages):

    burst:N                     N jobs at once (the default load: --burst N)
    bursts:N:every:T:for:D      N jobs at 0, T, 2T, ... before D
    rate:R/s:for:D              R jobs a second for D, evenly spaced (the open model)
    poisson:R/s:for:D[:seed:S]  R a second on average, exponential gaps, seeded (default 1)
    ramp:R1-R2/s:over:D         the rate moving linearly from R1 to R2 over D
    trace:FILE[:speed:K][:scale:M]  submit times replayed from FILE, K times as fast, M
                                jobs an arrival on average
    warmup:D                    not a stage: the steady part starts D after the first
                                submit (default: detected, measure/steady.py)

Durations are seconds, or a number with ms, s or m. A trace FILE holds one submit time
(seconds) per line, or is a previous run's LABEL.events.jsonl (its first rep's submits).
Arrivals are a function of the spelling alone: the same spec gives the same times in every
rep and every run, so both sides of a comparison meet the same arrivals.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import numpy as np

from jobbench.core.scenario.load import Burst, Load, Wave
from jobbench.errors import UsageError

SPELLINGS = (
    "burst:N, bursts:N:every:T:for:D, rate:R/s:for:D, poisson:R/s:for:D, "
    "ramp:R1-R2/s:over:D, trace:FILE; stages joined by ',', and optionally warmup:D"
)
MAX_ARRIVALS = 10_000_000  # a typo such as rate:1e9/s must not try to allocate them all
DEFAULT_POISSON_SEED = 1
US_PER_S = 1_000_000

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m)?$")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)/s$")
_RAMP = re.compile(r"^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)/s$")


@dataclass(frozen=True)
class Arrivals:
    """A Load given by each job's intended submit time, in seconds from the rep's start."""

    spec: str
    times: tuple[float, ...]
    warmup_s: float | None = None  # warmup:D; None: the steady part's start is detected

    @property
    def jobs(self) -> int:
        return len(self.times)

    def waves(self) -> tuple[Wave, ...]:
        """Jobs due at the same instant go in one submission."""
        return tuple(Wave(at, len(list(same))) for at, same in groupby(self.times))

    def describe(self) -> str:
        return f"{self.spec} ({self.jobs:,} jobs over {self.duration_s():g} s)"

    def duration_s(self) -> float:
        return self.times[-1] if self.times else 0.0


def parse_load(spec: str, flag: str = "--load") -> Load:
    """The Load `spec` spells; a one-line UsageError naming `flag` when it does not parse."""
    text = spec.strip()
    stages = [stage.strip() for stage in text.split(",")]
    if len(stages) == 1 and stages[0].startswith("burst:"):
        return Burst(_count(_fields(stages[0], flag, 2)[1], flag, stages[0]))
    times: list[float] = []
    start = 0.0
    warmup_s = None
    for stage in stages:
        if stage.startswith("warmup:"):
            if warmup_s is not None:
                raise UsageError(f"{flag} {spec}: give warmup:D once")
            parts = stage.split(":")
            if len(parts) != 2:
                raise UsageError(f"{flag} {stage}: write it as warmup:D, e.g. warmup:5s")
            warmup_s = _seconds(parts[1], flag, stage)
            continue
        stage_times, length = _stage(stage, flag, MAX_ARRIVALS - len(times))
        times.extend(start + t for t in stage_times)
        start += length
    if not times:
        raise UsageError(f"{flag} {spec}: it submits no job; give a rate above 0 or a count")
    return Arrivals(text, tuple(times), warmup_s)


def _stage(stage: str, flag: str, room: int) -> tuple[list[float], float]:
    """One stage's arrival times from its own start, and its length in seconds; more than
    `room` jobs (about, before they are made) is an error."""

    def fits(expected: float) -> None:
        if expected > room:
            raise UsageError(f"{flag} {stage}: more than {MAX_ARRIVALS:,} jobs; lower the rate")

    kind = stage.split(":", 1)[0]
    if kind == "burst":
        count = _count(_fields(stage, flag, 2)[1], flag, stage)
        fits(count)
        return [0.0] * count, 0.0
    if kind == "bursts":
        f = _fields(stage, flag, 6, ("every", "for"))
        count, every = _count(f[1], flag, stage), _seconds(f[3], flag, stage)
        length = _seconds(f[5], flag, stage)
        if every <= 0:
            raise UsageError(f"{flag} {stage}: 'every' must be above 0, e.g. every:10s")
        fits(count * math.ceil(length / every))
        return [i * every for i in range(math.ceil(length / every)) for _ in range(count)], length
    if kind in ("rate", "poisson"):
        f = _fields(stage, flag, 4, ("for",), extra=("seed",) if kind == "poisson" else ())
        rate, length = _rate(f[1], flag, stage), _seconds(f[3], flag, stage)
        fits(rate * length)
        if kind == "rate":
            return [i / rate for i in range(math.floor(rate * length + 1e-9))], length
        if len(f) > 4 and not f[5].isdigit():
            raise UsageError(f"{flag} {stage}: seed must be a whole number, e.g. seed:7")
        seed = int(f[5]) if len(f) > 4 else DEFAULT_POISSON_SEED
        return _poisson(rate, length, seed), length
    if kind == "ramp":
        f = _fields(stage, flag, 4, ("over",))
        low, high = _ramp(f[1], flag, stage)
        length = _seconds(f[3], flag, stage)
        fits((low + high) / 2 * length)
        return _ramped(low, high, length), length
    if kind == "trace":
        return _trace(stage, flag)
    raise UsageError(f"{flag} {stage}: unknown load {kind!r}; write one of {SPELLINGS}")


def _fields(
    stage: str, flag: str, count: int, words: tuple[str, ...] = (), extra: tuple[str, ...] = ()
) -> list[str]:
    """`stage` split on ':' into `count` fields whose odd ones from the third are `words`,
    optionally followed by `extra` word:value pairs."""
    f = stage.split(":")
    allowed = {count, count + 2 * len(extra)} if extra else {count}
    expected = [f[0], "N" if count == 2 else "VALUE", *(x for w in words for x in (w, "VALUE"))]
    if len(f) not in allowed or any(f[2 + 2 * i] != w for i, w in enumerate(words)):
        raise UsageError(f"{flag} {stage}: write it as {':'.join(expected)}; see {SPELLINGS}")
    if len(f) > count and f[count] not in extra:
        raise UsageError(f"{flag} {stage}: unknown option {f[count]!r}; only {', '.join(extra)}")
    return f


def _count(text: str, flag: str, stage: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"{flag} {stage}: {text!r} is not a count of jobs; write e.g. 1024")
    return int(text)


def _seconds(text: str, flag: str, stage: str) -> float:
    match = _DURATION.match(text)
    if match is None:
        raise UsageError(f"{flag} {stage}: {text!r} is not a duration; write e.g. 30s, 500ms, 2m")
    value, unit = float(match[1]), match[2] or "s"
    return value * {"ms": 0.001, "s": 1.0, "m": 60.0}[unit]


def _rate(text: str, flag: str, stage: str) -> float:
    match = _RATE.match(text)
    if match is None or float(match[1]) <= 0:
        raise UsageError(f"{flag} {stage}: {text!r} is not a rate; write e.g. 40/s")
    return float(match[1])


def _ramp(text: str, flag: str, stage: str) -> tuple[float, float]:
    match = _RAMP.match(text)
    if match is None:
        raise UsageError(f"{flag} {stage}: {text!r} is not a ramp; write e.g. 10-50/s")
    return float(match[1]), float(match[2])


def _poisson(rate: float, length: float, seed: int) -> list[float]:
    """Exponential gaps of mean 1/rate from 0, every arrival before `length`."""
    rng = np.random.default_rng(seed)
    times: list[float] = []
    last = 0.0
    while True:
        gaps = rng.exponential(1.0 / rate, size=max(16, int(rate * length * 1.1) + 16))
        for at in map(float, last + np.cumsum(gaps)):
            if at >= length:
                return times
            times.append(at)
        last = times[-1]


def _ramped(low: float, high: float, length: float) -> list[float]:
    """The k-th arrival where the ramp's cumulative count reaches k: the rate is low + (high -
    low) t / length, so the count by t is low t + slope t^2 / 2 (k6's ramping arrival rate)."""
    total = (low + high) / 2 * length
    slope = (high - low) / length if length > 0 else 0.0
    times = []
    for k in range(math.floor(total + 1e-9)):
        if slope == 0:
            times.append(k / low)
        else:  # the root of slope/2 t^2 + low t - k = 0 in [0, length]
            times.append((-low + math.sqrt(low * low + 2 * slope * k)) / slope)
    return times


def _trace(stage: str, flag: str) -> tuple[list[float], float]:
    """trace:FILE[:speed:K][:scale:M]: FILE's times K times as fast (the rate K times as high
    by squeezing time), and M jobs an arrival on average (the rate M times as high at the same
    instants: arrival i gets floor((i + 1) M) - floor(i M) jobs, so M < 1 thins evenly)."""
    parts = stage.split(":")
    options = dict(zip(parts[2::2], parts[3::2]))
    if len(parts) % 2 or len(parts) < 2 or set(options) - {"speed", "scale"}:
        raise UsageError(f"{flag} {stage}: write it as trace:FILE[:speed:K][:scale:M]")
    speed, scale = (_positive(options.get(k, "1"), k, flag, stage) for k in ("speed", "scale"))
    path = Path(parts[1])
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag} {stage}: cannot read {path}: {exc.strerror}") from None
    times = _trace_times(text, path, flag)
    if not times:
        raise UsageError(f"{flag} {stage}: {path} holds no submit time")
    if len(times) * scale > MAX_ARRIVALS:
        raise UsageError(f"{flag} {stage}: more than {MAX_ARRIVALS:,} jobs; lower the scale")
    first = times[0]
    scaled = [
        (t - first) / speed
        for i, t in enumerate(times)
        for _ in range(math.floor((i + 1) * scale + 1e-9) - math.floor(i * scale + 1e-9))
    ]
    return scaled, (times[-1] - first) / speed


def _positive(text: str, name: str, flag: str, stage: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{flag} {stage}: {name} must be a number above 0, e.g. {name}:2")
    return value


def _trace_times(text: str, path: Path, flag: str) -> list[float]:
    """Seconds, sorted: one number a line, or a LABEL.events.jsonl's submits of its first
    scenario's first rep (results/events_file.py: times in us from the rep's start)."""
    if path.name.endswith(".jsonl"):
        try:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError:
            raise UsageError(f"{flag} trace:{path}: not a LABEL.events.jsonl file") from None
        submits = [row for row in rows if isinstance(row, dict) and row.get("ev") == "submit"]
        if not submits:
            return []
        first = (submits[0].get("scenario"), submits[0].get("rep"))
        return sorted(
            row["t"] / US_PER_S for row in submits if (row.get("scenario"), row.get("rep")) == first
        )
    times = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            times.append(float(line.split(",")[0]))
        except ValueError:
            raise UsageError(
                f"{flag} trace:{path}: line {number} is not a time in seconds: {line[:40]!r}"
            ) from None
    return sorted(times)
