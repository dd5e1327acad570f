"""Which scenario of one side is compared with which of the other: paired by name, and their
parameters must agree but for what the sides differ in on purpose (the variant's worker,
policy and take-ahead, and the latency fields a variant sets). A difference stops the
comparison naming the first field, e.g. `latency.take: 0.07 vs 0.05`."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol, TypeVar

from jobbench.errors import UsageError
from jobbench.results.model import Params, RowParams

VARIANT_PARAMS = {"worker", "policy", "take_ahead"}


def shared_params(params: Params, free_latency: Collection[str] = ()) -> RowParams:
    """The params both sides must agree on: without the variants' own settings."""
    return RowParams.model_validate(_shared(params, free_latency))


def _shared(params: Params, free_latency: Collection[str]) -> dict[str, Any]:
    shared = {
        k: v for k, v in params.model_dump(exclude_unset=True).items() if k not in VARIANT_PARAMS
    }
    latency = shared.get("latency")
    if free_latency and isinstance(latency, dict):
        shared["latency"] = {k: v for k, v in latency.items() if k not in free_latency}
    return shared


def first_param_difference(a: Params, b: Params, free_latency: Collection[str] = ()) -> str | None:
    flat_a, flat_b = _flat(_shared(a, free_latency)), _flat(_shared(b, free_latency))
    for key in sorted(set(flat_a) | set(flat_b)):
        if flat_a.get(key) != flat_b.get(key):
            return f"{key}: {flat_a.get(key)!r} vs {flat_b.get(key)!r}"
    return None


def _flat(params: dict[str, Any]) -> dict[str, Any]:
    """`latency.take` and so on: a difference names the one field that differs."""
    flat = {}
    for key, value in params.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{sub}": v for sub, v in value.items()})
        else:
            flat[key] = value
    return flat


class Named(Protocol):
    """A scenario as far as pairing goes: a result's, or one a variant is about to run."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> Params: ...


S = TypeVar("S", bound=Named)
S_co = TypeVar("S_co", bound=Named, covariant=True)


class Lineup(Protocol[S_co]):
    """A side's scenarios: a Result, or what a variant will run (core/run/sides.py)."""

    @property
    def label(self) -> str: ...

    @property
    def scenarios(self) -> Sequence[S_co]: ...


def match_scenarios(
    base: Lineup[S], cand: Lineup[S], free_latency: Collection[str] = ()
) -> list[tuple[S, S]]:
    """Pair scenarios by name; parameters must agree except the variants' own."""
    by_name = {entry.name: entry for entry in cand.scenarios}
    pairs = []
    for entry in base.scenarios:
        other = by_name.get(entry.name)
        if other is None:
            raise UsageError(
                f"scenario {entry.name!r} is in {base.label} but not in "
                f"{cand.label}; compare results of the same suite"
            )
        diff = first_param_difference(entry.params, other.params, free_latency)
        if diff:
            raise UsageError(
                f"scenario {entry.name!r} differs between {base.label} and "
                f"{cand.label} in {diff}; re-run both with the same settings"
            )
        pairs.append((entry, other))
    if not pairs:
        raise UsageError(f"{base.label} has no scenarios to compare")
    return pairs
