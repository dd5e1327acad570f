"""The latency model: named delays, each a distribution, sampled from one seeded generator."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

KINDS = ("fixed", "uniform", "normal", "lognormal", "samples")


class LatencySpecError(ValueError):
    """A latency value that cannot be parsed; the message names the fix."""


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
        raise LatencySpecError(f"{name}: expected seconds or 'kind:a,b', got {value!r}")
    if isinstance(value, (int, float)):
        return _checked(Distribution("fixed", float(value)), name)
    if isinstance(value, dict):
        return _from_table(value, name)
    text = str(value).strip()
    kind, sep, rest = text.partition(":")
    if not sep:
        try:
            return _checked(Distribution("fixed", float(text)), name)
        except ValueError:
            raise LatencySpecError(
                f"{name}: cannot read {text!r}; give seconds (0.5) or kind:a,b "
                f"with kind one of {', '.join(KINDS)}"
            ) from None
    if kind == "samples":
        return _checked(_samples_from_file(rest, name), name)
    try:
        a_text, b_text = rest.split(",")
        return _checked(Distribution(kind, float(a_text), float(b_text)), name)
    except ValueError:
        raise LatencySpecError(
            f"{name}: cannot read {text!r}; write {kind}:A,B (two numbers)"
        ) from None


def _from_table(value: dict[str, Any], name: str) -> Distribution:
    kind = str(value.get("kind", "fixed"))
    try:
        if kind == "samples":
            if "file" in value:
                return _checked(_samples_from_file(str(value["file"]), name), name)
            samples = tuple(float(v) for v in value["samples"])
            return _checked(Distribution("samples", samples=samples), name)
        return _checked(
            Distribution(kind, float(value.get("a", 0.0)), float(value.get("b", 0.0))), name
        )
    except (KeyError, TypeError, ValueError):
        raise LatencySpecError(
            f'{name}: a table needs kind and numbers: {{kind = "uniform", a = 0.4, b = 0.6}} '
            'or {kind = "samples", samples = [0.5, 0.6]}'
        ) from None


def _samples_from_file(path: str, name: str) -> Distribution:
    try:
        numbers = [float(tok) for tok in Path(path).read_text().split() if tok.strip()]
    except (OSError, ValueError) as exc:
        raise LatencySpecError(f"{name}: cannot read samples from {path!r}: {exc}") from None
    return Distribution("samples", samples=tuple(numbers))


MAX_LATENCY_S = 7 * 24 * 3600.0  # RunPod's longest policy limit; anything above is a typo


def _checked(dist: Distribution, name: str) -> Distribution:
    if dist.kind not in KINDS:
        raise LatencySpecError(f"{name}: unknown distribution {dist.kind!r}; use one of {KINDS}")
    if dist.kind == "fixed" and (dist.a < 0 or not math.isfinite(dist.a)):
        raise LatencySpecError(f"{name}: must be a finite number of seconds >= 0, got {dist.a}")
    if dist.kind == "uniform" and not 0 <= dist.a <= dist.b:
        raise LatencySpecError(f"{name}: uniform:LOW,HIGH needs 0 <= LOW <= HIGH")
    if dist.kind in ("normal", "lognormal") and dist.b < 0:
        raise LatencySpecError(f"{name}: the spread of {dist.kind} must be >= 0")
    if dist.kind == "samples" and (not dist.samples or min(dist.samples) < 0):
        raise LatencySpecError(f"{name}: samples must be a non-empty list of seconds >= 0")
    numbers = (dist.a, dist.b, *dist.samples)
    if (
        not all(math.isfinite(x) for x in numbers)
        or dist.mean > MAX_LATENCY_S
        or (dist.kind != "lognormal" and max(numbers) > MAX_LATENCY_S)
    ):
        raise LatencySpecError(f"{name}: numbers must be finite and at most {MAX_LATENCY_S:g} s")
    return dist


@dataclass(frozen=True)
class LatencyModel:
    """docs/latency-model.md: what a take, a wake, a hold and a done cost."""

    take: Distribution = field(default_factory=lambda: Distribution("fixed", 0.5))
    wake: Distribution = field(default_factory=lambda: Distribution("fixed", 0.05))
    hold: Distribution = field(default_factory=lambda: Distribution("fixed", 20.0))
    done: Distribution = field(default_factory=lambda: Distribution("fixed", 0.0))

    FIELDS = ("take", "wake", "hold", "done")

    @classmethod
    def from_mapping(cls, values: dict[str, Any], base: LatencyModel | None = None) -> LatencyModel:
        """Build from `{"take": 0.5, "wake_latency": ...}`; unknown keys are an error."""
        model = base or cls()
        changes: dict[str, Distribution] = {}
        for key, raw in values.items():
            short = key.removesuffix("_latency")
            if short not in cls.FIELDS:
                raise LatencySpecError(
                    f"latency: unknown key {key!r}; use take, wake, hold or done"
                )
            changes[short] = parse_distribution(raw, f"{short}_latency")
        return replace(model, **changes)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name).to_json() for name in self.FIELDS}

    def describe(self) -> str:
        return (
            f"take {self.take.describe()} s, wake {self.wake.describe()} s, "
            f"hold {self.hold.describe()} s, done {self.done.describe()} s"
        )


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
