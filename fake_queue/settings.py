"""Server settings: the flags (fake_queue.options) over the `--config FILE` TOML, validated into
one frozen value."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fake_queue.options import ServeOptions, flag
from fake_queue.queue.faults import FaultRule, parse_fault
from fake_queue.queue.latency import (
    TAKE_EXTRA,
    LatencyModel,
    LatencySpecError,
    parse_distribution,
)

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
BENCH_PREFIX = "/_bench"
MAX_BATCH_SIZE = 10_000

# Settings taken as given, from a flag or the TOML key of the same name; the numbers among them
# are checked to be numbers (TOML could hand over any type).
_WHOLE_NUMBERS = ("port", "seed", "max_connections")
_SECONDS = ("header_timeout", "idle_timeout")
_PLAIN_FIELDS = ("host", "endpoint_id", "api_key", "rate_limits", *_WHOLE_NUMBERS, *_SECONDS)


class SettingsError(ValueError):
    """Bad server settings; the message names the flag or key and the fix."""


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8000
    endpoint_id: str = "local"
    latency: LatencyModel = field(default_factory=LatencyModel)
    api_key: str | None = None
    rate_limits: str = "off"  # off | runpod
    faults: tuple[FaultRule, ...] = ()
    seed: int | None = None
    # Shedding abuse (docs/latency-model.md, "Abuse and timeouts"). Neither timeout can cut a
    # long-poll: the header timeout runs only until a request's headers are in, the idle one
    # only between requests. 60 s idle outlasts aiohttp clients' own 15 s keep-alive.
    header_timeout: float = 10.0  # seconds from connecting, or a request's first byte
    idle_timeout: float = 60.0  # seconds between requests on a kept-alive connection
    max_connections: int = 16_384  # ~9 kB each; an SDK worker may hold 2 + one per slot

    @property
    def is_loopback(self) -> bool:
        return self.host in LOOPBACK_HOSTS or self.host.startswith("127.")

    def validate(self) -> ServerSettings:
        if not 0 <= self.port <= 65535:
            raise SettingsError(f"--port {self.port}: use 0 (pick a free port) to 65535")
        if self.rate_limits not in ("off", "runpod"):
            raise SettingsError(f"--rate-limits {self.rate_limits!r}: use off or runpod")
        if not self.endpoint_id or "/" in self.endpoint_id:
            raise SettingsError(
                f"--endpoint-id {self.endpoint_id!r}: use a non-empty id without '/'"
            )
        if self.latency.hold.mean <= 0:
            raise SettingsError("--hold must be > 0 seconds (an empty take waits this long)")
        for name in _SECONDS:
            if not getattr(self, name) > 0:
                raise SettingsError(f"{flag(name)} {getattr(self, name)}: use seconds > 0")
        if self.max_connections < 1:
            raise SettingsError(f"--max-connections {self.max_connections}: use 1 or more")
        return self


_KEYS = {
    "host",
    "port",
    "endpoint_id",
    "api_key",
    "rate_limits",
    "fault",
    "faults",
    "seed",
    "latency",
    "take_latency",
    "wake_latency",
    "hold",
    "done_latency",
    "take_extra",
    "header_timeout",
    "idle_timeout",
    "max_connections",
}


def settings_from_mapping(
    values: dict[str, Any], base: ServerSettings | None = None
) -> ServerSettings:
    """Apply a TOML table (or parsed flags) onto `base`; unknown keys are an error."""
    settings = base or ServerSettings()
    unknown = set(values) - _KEYS
    if unknown:
        raise SettingsError(f"config: unknown key(s) {sorted(unknown)}; known: {sorted(_KEYS)}")
    _check_numbers(values)
    latency_values: dict[str, Any] = dict(values.get("latency", {}))
    for key in ("take_latency", "wake_latency", "hold", "done_latency", TAKE_EXTRA):
        if key in values:
            latency_values[key] = values[key]
    try:
        latency = LatencyModel.from_mapping(latency_values, settings.latency)
        faults = tuple(parse_fault(str(f)) for f in values.get("faults", values.get("fault", [])))
    except (LatencySpecError, ValueError) as exc:
        raise SettingsError(str(exc)) from None
    changes: dict[str, Any] = {"latency": latency}
    if faults:
        changes["faults"] = settings.faults + faults
    for key in _PLAIN_FIELDS:
        if key in values and values[key] is not None:
            changes[key] = values[key]
    return replace(settings, **changes).validate()


def _check_numbers(values: dict[str, Any]) -> None:
    """TOML may give any type where a number belongs: name the key, not a TypeError."""
    for key in (*_WHOLE_NUMBERS, *_SECONDS):
        value = values.get(key)
        kinds = (int, float) if key in _SECONDS else (int,)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
            kind = "seconds" if key in _SECONDS else "a whole number"
            raise SettingsError(f"{key} = {value!r}: use {kind}")


def load_settings_file(path: Path) -> dict[str, Any]:
    """Read a TOML file; settings may sit at top level or under `[server]`."""
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise SettingsError(f"--config {path}: cannot read it ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"--config {path}: not valid TOML ({exc})") from None
    table = data.get("server", data)
    if not isinstance(table, dict):
        raise SettingsError(f"--config {path}: [server] must be a table")
    return table


def settings_from_options(options: ServeOptions) -> ServerSettings:
    """The --config TOML (if any) under the flags given, validated; a SettingsError names the
    flag (or the file) to fix. --fault rules add to the file's, after them."""
    base = ServerSettings()
    if options.config is not None:
        try:
            base = settings_from_mapping(load_settings_file(options.config), base)
        except SettingsError as exc:
            message = str(exc)
            if not message.startswith("--config"):
                message = f"--config {options.config}: {message}"
            raise SettingsError(message) from None
    return _apply_flags(options, base).validate()


# ServeOptions field -> LatencyModel field
_LATENCY_FLAGS = {
    "take_latency": "take",
    "wake_latency": "wake",
    "hold": "hold",
    "done_latency": "done",
}


def _apply_flags(options: ServeOptions, base: ServerSettings) -> ServerSettings:
    latency: dict[str, Any] = {}  # LatencyModel field -> its Distribution
    try:
        for field_name, model_field in _LATENCY_FLAGS.items():
            value = getattr(options, field_name)
            if value is not None:
                latency[model_field] = parse_distribution(value, flag(field_name))
        faults = tuple(parse_fault(rule) for rule in options.faults)
    except ValueError as exc:  # LatencySpecError, FaultSpecError
        raise SettingsError(str(exc)) from None
    model = replace(base.latency, **latency)
    if options.take_extra is not None:
        try:
            model = LatencyModel.from_mapping({TAKE_EXTRA: options.take_extra}, model)
        except LatencySpecError as exc:
            raise SettingsError(f"{flag(TAKE_EXTRA)}: {exc.problem}") from None
    changes: dict[str, Any] = {
        "latency": model,
        "faults": base.faults + faults,
    }
    for field_name in _PLAIN_FIELDS:
        value = getattr(options, field_name)
        if value is not None:
            changes[field_name] = value
    return replace(base, **changes)
