"""The queue's event log (docs/events.md): what `QueueLedger.events` must offer, and a compact
form of it for logs of millions of events.

The queue appends each event as a dict and the HTTP routes read slices of them, so the real
queue keeps a plain list. A simulated rep of a million jobs logs about four million events,
and as dicts they alone would take about 0.8 KB a job. `CompactEvents` keeps them by column
instead: one list per key, per set of keys (an event kind's shape), and one byte per event
saying which shape comes next, so an event costs about 8 bytes a field. Reading it (iterating
or slicing) rebuilds each event's dict, one at a time, equal to the one appended.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, Protocol, overload

from fake_queue.queue.jobs import Event

MAX_SHAPES = 256  # the shape index is one byte; the queue logs about ten


class EventLog(Protocol):
    """What the queue and its readers use of the log: a list of dicts does."""

    def append(self, event: Event, /) -> None: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Event]: ...

    @overload
    def __getitem__(self, index: int, /) -> Event: ...

    @overload
    def __getitem__(self, index: slice, /) -> list[Event]: ...


class CompactEvents:
    """An append-only event log stored by column. Events whose keys (in order) are the same
    share a shape; each shape's values are one list per key."""

    def __init__(self) -> None:
        self._shape_of: dict[tuple[str, ...], int] = {}
        self._keys: list[tuple[str, ...]] = []
        self._columns: list[list[list[Any]]] = []
        self._order = array("B")  # the shape of each event, in log order

    def append(self, event: Event, /) -> None:
        keys = tuple(event)
        shape = self._shape_of.get(keys)
        if shape is None:
            shape = self._new_shape(keys)
        # each value onto its column in one C-level pass (list.append returns None, so any()
        # runs it over every pair): about 20 % cheaper than a Python loop, 4 million times a rep
        any(map(list.append, self._columns[shape], event.values()))
        self._order.append(shape)

    def _new_shape(self, keys: tuple[str, ...]) -> int:
        shape = len(self._keys)
        if shape >= MAX_SHAPES:
            raise ValueError(f"more than {MAX_SHAPES} event shapes: {keys}")
        self._shape_of[keys] = shape
        self._keys.append(keys)
        self._columns.append([[] for _ in keys])
        return shape

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[Event]:
        rows = [zip(*columns) for columns in self._columns]  # lazy: later appends are seen
        makers = [_dict_maker(keys) for keys in self._keys]
        for shape in self._order:
            if shape >= len(rows):  # a shape first appended meanwhile
                rows.extend(zip(*columns) for columns in self._columns[len(rows) :])
                makers.extend(_dict_maker(keys) for keys in self._keys[len(makers) :])
            yield makers[shape](next(rows[shape]))

    def head(self) -> LogHead:
        """The log as it is now, whatever is appended later: what a rep's readers read."""
        return LogHead(self)

    def values_of(self, kind: str, key: str, counts: list[int] | None = None) -> Iterator[Any]:
        """The `key` of every event whose "ev" is `kind`, by shape, not in log order: a
        column read, with no dict built (`counts`: only each shape's first so many)."""
        for shape, keys in enumerate(self._keys):
            if "ev" not in keys or key not in keys:
                continue
            columns = self._columns[shape]
            kinds, values = columns[keys.index("ev")], columns[keys.index(key)]
            if counts is not None:
                limit = counts[shape] if shape < len(counts) else 0
                kinds, values = kinds[:limit], values[:limit]
            yield from (value for ev, value in zip(kinds, values) if ev == kind)

    @overload
    def __getitem__(self, index: int, /) -> Event: ...

    @overload
    def __getitem__(self, index: slice, /) -> list[Event]: ...

    def __getitem__(self, index: int | slice, /) -> Event | list[Event]:
        """Either walks the log from its start: its readers iterate, this is for the odd look."""
        if isinstance(index, int):
            if index < 0:
                index += len(self)
            if not 0 <= index < len(self):
                raise IndexError("event index out of range")
            return self[index : index + 1][0]
        picked = range(*index.indices(len(self)))
        return [event for i, event in enumerate(self) if i in picked]


@functools.cache  # a few shapes, met again by every rep's reads: compiled once a process
def _dict_maker(keys: tuple[str, ...]) -> Callable[[tuple[Any, ...]], Event]:
    """A function making a row of `keys` the event dict: a dict display compiled for these
    keys, twice as fast as dict(zip(keys, row)) (0.4 against 0.9 us an event on the 2-core VM,
    for the millions a simulated rep's readers rebuild). The keys are the queue's own string
    literals; repr() spells each exactly."""
    fields = ", ".join(f"{key!r}: row[{i}]" for i, key in enumerate(keys))
    maker: Callable[[tuple[Any, ...]], Event] = eval(f"lambda row: {{{fields}}}")
    return maker


class LogHead:
    """A compact log's first events, those it held when the head was taken (later appends are
    not part of it); iterated as dicts, or read by column like the log."""

    def __init__(self, log: CompactEvents) -> None:
        self.log = log
        self.count = len(log)
        self.shape_counts = [len(columns[0]) if columns else 0 for columns in log._columns]

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Event]:
        return islice(iter(self.log), self.count)

    def values_of(self, kind: str, key: str) -> Iterator[Any]:
        return self.log.values_of(kind, key, self.shape_counts)
