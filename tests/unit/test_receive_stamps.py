"""fake_queue.http.receive_stamps: a request is stamped when its bytes reached the host, however
late the loop got to read them."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from fake_queue.http import receive_stamps

pytestmark = pytest.mark.skipif(
    receive_stamps.SO_TIMESTAMPNS is None, reason="SO_TIMESTAMPNS is Linux's"
)


class Reader(asyncio.Protocol):
    def __init__(self) -> None:
        self.stamped: receive_stamps.StampedSocket | None = None
        self.reads: list[tuple[bytes, int, int]] = []  # data, its stamp, when it was read

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.stamped = receive_stamps.attach(transport)

    def data_received(self, data: bytes) -> None:
        assert self.stamped is not None
        self.reads.append((data, self.stamped.last_ns, time.monotonic_ns()))


def test_bytes_read_late_carry_the_time_they_arrived() -> None:
    async def main() -> tuple[Reader, int]:
        loop = asyncio.get_running_loop()
        reader = Reader()
        server = await loop.create_server(lambda: reader, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        try:
            await asyncio.sleep(0.02)  # accepted, the stamps on
            sent = time.monotonic_ns()
            client.sendall(b"GET / HTTP/1.1\r\n\r\n")
            time.sleep(0.05)  # the loop is busy: it reads 50 ms after the bytes came
            await asyncio.sleep(0.02)
            client.sendall(b"more")
            await asyncio.sleep(0.02)
        finally:
            client.close()
            server.close()
            await server.wait_closed()
        return reader, sent

    reader, sent = asyncio.run(main())
    (first, stamp, read), (second, later_stamp, _) = reader.reads
    assert first.startswith(b"GET /") and second == b"more"
    assert sent - 1_000_000 <= stamp <= sent + 5_000_000  # as it arrived, within the clocks'
    assert read - stamp >= 45_000_000  # ...and not when it was read, 50 ms later
    assert later_stamp > stamp  # each read its own stamp


def test_a_transport_without_a_tcp_socket_is_left_alone() -> None:
    class NoSocket(asyncio.BaseTransport):
        pass

    assert receive_stamps.attach(NoSocket()) is None
    left, right = socket.socketpair()  # a Unix socket: no TCP, no stamps asked for

    class UnixTransport(asyncio.BaseTransport):
        _sock = left

    try:
        transport = UnixTransport()
        assert receive_stamps.attach(transport) is None
        assert transport._sock is left  # still read as asyncio reads it
    finally:
        left.close()
        right.close()
