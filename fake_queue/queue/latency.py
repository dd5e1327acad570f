"""The latency model: named delays, each a distribution, sampled from one seeded generator."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

KINDS = ("fixed", "uniform", "normal", "lognormal", "samples")


class LatencySpecError(ValueError):
    """A latency value that cannot be parsed or makes no sense: `name` is the setting as the
    caller spelled it, `problem` what is wrong and the fix."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name
        self.problem = problem


@dataclass(frozen=True)
class Distribution:
    """A non-negative delay in seconds: `fixed` or drawn from a distribution.

    `a` and `b` are (value, -), (low, high), (mean, stdev), (mu, sigma) of the underlying
    normal for lognormal; `samples` draws uniformly from a list read from a file.
    """

    kind: str = "fixed"
    a: float = 0.0
    b: float = 0.0
    samples: tuple[float, ...] = ()

    def sample(self, rng: random.Random) -> float:
        if self.kind == "fixed":
            return self.a
        if self.kind == "uniform":
            value = rng.uniform(self.a, self.b)
        elif self.kind == "normal":
            value = rng.gauss(self.a, self.b)
        elif self.kind == "lognormal":
            value = rng.lognormvariate(self.a, self.b)
        else:
            value = rng.choice(self.samples)
        return min(max(0.0, value), MAX_LATENCY_S)

    @property
    def mean(self) -> float:
        if self.kind == "fixed":
            return self.a
        if self.kind == "uniform":
            return (self.a + self.b) / 2
        if self.kind == "normal":
            return max(0.0, self.a)
        if self.kind == "lognormal":
            try:
                return math.exp(self.a + self.b**2 / 2)
            except OverflowError:
                return math.inf
        return sum(self.samples) / len(self.samples)

    def describe(self) -> str:
        if self.kind == "fixed":
            return f"{self.a:g}"
        if self.kind == "samples":
            return f"samples(n={len(self.samples)}, mean={self.mean:.3g})"
        return f"{self.kind}:{self.a:g},{self.b:g}"

    def to_json(self) -> Any:
        if self.kind == "fixed":
            return self.a
        if self.kind == "samples":
            return {"kind": "samples", "samples": list(self.samples)}
        return {"kind": self.kind, "a": self.a, "b": self.b}


def parse_distribution(value: Any, name: str) -> Distribution:
    """Parse `0.5`, `"uniform:0.4,0.6"`, `"normal:0.5,0.02"`, `"lognormal:-0.7,0.1"`,
    `"samples:FILE"` or the JSON/TOML table form `{kind=..., a=..., b=...}`."""
    if isinstance(value, bool):
        raise LatencySpecError(name, f"expected seconds or 'kind:a,b', got {value!r}")
    if isinstance(value, (int, float)):
        return _checked(Distribution("fixed", float(value)), name)
    if isinstance(value, dict):
        return _checked(_from_table(value, name), name)
    text = str(value).strip()
    kind, sep, rest = text.partition(":")
    if not sep:
        return _checked(Distribution("fixed", _seconds(text, name)), name)
    if kind == "samples":
        return _checked(_samples_from_file(rest, name), name)
    if kind not in KINDS or kind == "fixed":
        raise LatencySpecError(name, f"unknown distribution {kind!r} in {text!r}; {_FORMS}")
    return _checked(Distribution(kind, *_two_numbers(kind, rest, name)), name)


_FORMS = "give seconds (0.5), uniform:LOW,HIGH, normal:MEAN,SD, lognormal:MU,SIGMA or samples:FILE"


def _seconds(text: str, name: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise LatencySpecError(name, f"cannot read {text!r}; {_FORMS}") from None


def _two_numbers(kind: str, rest: str, name: str) -> tuple[float, float]:
    """Only the parse: what is wrong with numbers that parse is `_checked`'s to say."""
    try:
        a_text, b_text = rest.split(",")
        return float(a_text), float(b_text)
    except ValueError:
        raise LatencySpecError(
            name, f"cannot read {kind}:{rest}; write {kind}:A,B (two numbers)"
        ) from None


def _from_table(value: dict[str, Any], name: str) -> Distribution:
    kind = str(value.get("kind", "fixed"))
    try:
        if kind == "samples":
            if "file" in value:
                return _samples_from_file(str(value["file"]), name)
            return Distribution("samples", samples=tuple(float(v) for v in value["samples"]))
        return Distribution(kind, float(value.get("a", 0.0)), float(value.get("b", 0.0)))
    except (KeyError, TypeError, ValueError):
        raise LatencySpecError(
            name,
            'a table needs kind and numbers: {kind = "uniform", a = 0.4, b = 0.6} '
            'or {kind = "samples", samples = [0.5, 0.6]}',
        ) from None


def _samples_from_file(path: str, name: str) -> Distribution:
    try:
        numbers = [float(tok) for tok in Path(path).read_text().split() if tok.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise LatencySpecError(name, f"cannot read samples from {path!r} ({reason})") from None
    except ValueError as exc:
        raise LatencySpecError(
            name, f"samples file {path!r}: {exc}; write seconds separated by spaces or lines"
        ) from None
    return Distribution("samples", samples=tuple(numbers))


# The bounds on latency values (docs/reliability.md, "Bounds on input"): a delay of more than an
# hour is a typo in a benchmark (and the runner's rep timeout grows with it); every draw is also
# clipped to it. jobbench/core/scenario/checks.py holds the other bounds; this one is the queue's
# too.
MAX_LATENCY_S = 3600.0
HOLD_ZERO = "must be > 0 seconds: an empty take waits this long (RunPod holds about 20 s)"


def _checked(dist: Distribution, name: str) -> Distribution:
    """Say what is wrong with a distribution that parsed, and how to write it instead."""
    problem = _problem(dist)
    if problem:
        raise LatencySpecError(name, problem)
    return dist


def _problem(dist: Distribution) -> str | None:
    spec = dist.describe() if dist.kind != "samples" else "samples"
    if dist.kind not in KINDS:
        return f"unknown distribution {dist.kind!r}; use one of {', '.join(KINDS)}"
    if not all(math.isfinite(x) for x in (dist.a, dist.b, *dist.samples)):
        return f"{spec} is not finite; give numbers of seconds (no inf or nan)"
    if dist.kind == "fixed" and dist.a < 0:
        return f"{dist.a:g} is negative; give a number of seconds >= 0"
    if dist.kind == "uniform" and dist.a < 0:
        return f"{spec} has LOW < 0; give seconds >= 0"
    if dist.kind == "uniform" and dist.a > dist.b:
        return f"{spec} has LOW > HIGH; write uniform:{dist.b:g},{dist.a:g}"
    if dist.kind == "normal" and dist.a < 0:
        return f"{spec} has a MEAN < 0 (draws are clipped at 0); give a MEAN >= 0"
    if dist.kind in ("normal", "lognormal") and dist.b < 0:
        what = "SD" if dist.kind == "normal" else "SIGMA"
        return f"{spec} has a {what} < 0; write {dist.kind}:{dist.a:g},{-dist.b:g}"
    if dist.kind == "samples" and (not dist.samples or min(dist.samples) < 0):
        return "samples must be a non-empty list of seconds >= 0"
    return _too_long(dist, spec)


def _too_long(dist: Distribution, spec: str) -> str | None:
    limit = f"at most {MAX_LATENCY_S:g} s (an hour)"
    if dist.kind == "lognormal" and dist.mean > MAX_LATENCY_S:
        return (
            f"{spec} has a mean of {dist.mean:.3g} s; keep it {limit}: MU and SIGMA are "
            "those of the log of the seconds (lognormal:-0.7,0.1 is about 0.5 s)"
        )
    if dist.kind != "lognormal" and max(dist.a, dist.b, *dist.samples) > MAX_LATENCY_S:
        return f"{spec} is over an hour; give delays {limit}"
    return None


@dataclass(frozen=True)
class LatencyModel:
    """docs/latency-model.md: what a take, a wake, a hold and a done cost, and how many jobs more
    than it asked for a take may claim (`take_extra`: 0, as RunPod's queue; more, a server-side
    fix, "A server-side fix")."""

    take: Distribution = field(default_factory=lambda: Distribution("fixed", 0.5))
    wake: Distribution = field(default_factory=lambda: Distribution("fixed", 0.05))
    hold: Distribution = field(default_factory=lambda: Distribution("fixed", 20.0))
    done: Distribution = field(default_factory=lambda: Distribution("fixed", 0.0))
    take_extra: int = 0

    FIELDS = ("take", "wake", "hold", "done")  # the delays; take_extra is a count of jobs

    @classmethod
    def from_mapping(cls, values: dict[str, Any], base: LatencyModel | None = None) -> LatencyModel:
        """Build from `{"take": 0.5, "wake_latency": ..., "take_extra": 4}`; unknown keys are
        an error."""
        model = base or cls()
        changes: dict[str, Any] = {}
        for key, raw in values.items():
            if key == TAKE_EXTRA:
                changes[key] = parse_take_extra(raw, key)
                continue
            short = key.removesuffix("_latency")
            if short not in cls.FIELDS:
                raise LatencySpecError(
                    "latency", f"unknown key {key!r}; use take, wake, hold, done or {TAKE_EXTRA}"
                )
            changes[short] = parse_distribution(raw, key)
            if short == "hold" and changes[short].mean <= 0:
                raise LatencySpecError(key, HOLD_ZERO)
        return replace(model, **changes)

    def to_json(self, *, every: bool = False) -> dict[str, Any]:
        """The delays, and take_extra when a server fix sets it (a result of RunPod's queue
        reads as before); `every`: take_extra also when 0, for a queue that keeps what it is
        not told (PUT /_bench/latency)."""
        out = {name: getattr(self, name).to_json() for name in self.FIELDS}
        if self.take_extra or every:
            out[TAKE_EXTRA] = self.take_extra
        return out

    def describe(self) -> str:
        extra = f", up to {self.take_extra} jobs more than asked" if self.take_extra else ""
        return (
            f"take {self.take.describe()} s, wake {self.wake.describe()} s, "
            f"hold {self.hold.describe()} s, done {self.done.describe()} s{extra}"
        )


TAKE_EXTRA = "take_extra"  # its key in a latency table, a result and PUT /_bench/latency
MAX_TAKE_EXTRA = 10_000  # a take's jobs are all in one answer: more is a typo


def parse_take_extra(value: Any, name: str) -> int:
    """A take's extra jobs: a whole number from 0 to MAX_TAKE_EXTRA."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise LatencySpecError(name, f"{value!r} is not a whole number of jobs; write e.g. 4")
    if not 0 <= value <= MAX_TAKE_EXTRA:
        raise LatencySpecError(name, f"{value} jobs: give 0 to {MAX_TAKE_EXTRA:,}")
    return value


class LatencySampler:
    """Draws every delay from one seeded generator so a run is repeatable."""

    def __init__(self, model: LatencyModel, seed: int | None = None) -> None:
        self.model = model
        self.seed = seed
        self._rng = random.Random(seed)

    def take(self) -> float:
        return self.model.take.sample(self._rng)

    def wake(self) -> float:
        return self.model.wake.sample(self._rng)

    def hold(self) -> float:
        return self.model.hold.sample(self._rng)

    def done(self) -> float:
        return self.model.done.sample(self._rng)

    def longest_done(self, count: int) -> float:
        """The longest of `count` done latencies (0 for none), drawn in turn as `done` draws
        them; a fixed one is not drawn `count` times over (a batch of a simulated burst)."""
        if count <= 0:
            return 0.0
        if self.model.done.kind == "fixed":
            return self.model.done.sample(self._rng)
        return max(self.done() for _ in range(count))
