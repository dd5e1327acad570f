"""The kernel's receive time for a server's TCP connections: when a request's bytes reached
this host, not when the loop woke up to read them. Stdlib, Linux.

A loop asleep when a take arrives wakes 0.1-0.25 ms later on these VMs (benchmarks/NOTES.md,
harness overhead), and a latency counted from the wake-up adds that to every take. The kernel
stamps each packet as it is received, but hands the stamp out only as an ancillary message of
recvmsg (SO_TIMESTAMPNS), and asyncio's selector transports read with recv: `attach` turns the
stamps on and has the transport read through `StampedSocket`, whose recv is a recvmsg that
keeps the stamp of the last packet read. asyncio has no public hook for this, so `attach`
replaces the transport's socket attribute; where that is not there (another loop, another
transport) or the platform has no SO_TIMESTAMPNS it returns None and callers keep the loop's
wake-up stamp (precise_loop.wake_ns).
"""

from __future__ import annotations

import asyncio
import platform
import socket
import struct
import sys
import time
from typing import Any

# Python's socket module does not name it: Linux's value where the generic socket options
# apply (not alpha, mips, parisc, sparc), on 64-bit machines, whose timespec is two int64s.
_GENERIC_64_BIT = {"x86_64", "aarch64", "riscv64", "ppc64le", "s390x"}
SO_TIMESTAMPNS: int | None = getattr(socket, "SO_TIMESTAMPNS", None) or (
    35 if sys.platform == "linux" and platform.machine() in _GENERIC_64_BIT else None
)
_TIMESPEC = struct.Struct("qq")  # struct timespec, CLOCK_REALTIME
_ANCILLARY_SIZE = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0


class StampedSocket:
    """A connected socket whose recv() also notes the kernel's receive time of what it read:
    `last_ns`, monotonic ns (the clock of the queue a server runs), 0 when the last read
    came without one (a packet the kernel did not stamp): never a stale stamp."""

    __slots__ = ("_sock", "last_ns", "send")

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.last_ns = 0
        # The transport's write calls send() once for each answer, so it is bound here rather
        # than found through __getattr__, which costs about 1 us a call: a woken group's answer
        # time makes 63 such calls in a row.
        self.send = sock.send

    def recv(self, size: int, flags: int = 0) -> bytes:
        data, ancillary, _, _ = self._sock.recvmsg(size, _ANCILLARY_SIZE, flags)
        self.last_ns = 0
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanoseconds = _TIMESPEC.unpack_from(value)
                # Realtime to monotonic through the clocks' offset now (read within ~1 us).
                offset = time.time_ns() - time.monotonic_ns()
                self.last_ns = seconds * 1_000_000_000 + nanoseconds - offset
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def attach(transport: asyncio.BaseTransport) -> StampedSocket | None:
    """Read `transport`'s TCP socket through a StampedSocket; None where that cannot be done."""
    sock = getattr(transport, "_sock", None)  # asyncio's selector transports
    if (
        SO_TIMESTAMPNS is None
        or not _ANCILLARY_SIZE
        or not isinstance(sock, socket.socket)
        or sock.family not in (socket.AF_INET, socket.AF_INET6)
        or sock.type != socket.SOCK_STREAM
    ):
        return None
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        return None
    stamped = StampedSocket(sock)
    setattr(transport, "_sock", stamped)  # noqa: B010 - a private attribute, on purpose
    return stamped
