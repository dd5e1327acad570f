"""POSTs written back to back on one kept-alive connection (HTTP/1.1 pipelining): a slow answer
never delays the next request. The open-loop driver's sender (core/real_workers/submit_pacer.py): it
writes each submission when it is due and, while it waits for the next one, reads the queue's
answers (in order) as they come, in the same thread: no second thread to share the GIL with, so the
wait for the next submission ends on time (select's timeout is in microseconds)."""

from __future__ import annotations

import http.client
import json
import select
import time
from typing import Any
from urllib.parse import urlsplit

from jobbench.errors import RunFailed

READ_BYTES = 65536


class PipelinedPoster:
    """`post(body)` writes one request to `path`; `wait_until(t)` reads answers until the
    time.monotonic() reading `t`; `close()` reads the answers still due. A refused request
    (4xx, 5xx) or a dropped connection is kept in `error`, and the next `post` raises it."""

    def __init__(
        self, base_url: str, path: str, api_key: str | None = None, timeout_s: float = 30.0
    ) -> None:
        parts = urlsplit(base_url)
        kind = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        self.base_url = base_url
        self._conn = kind(parts.netloc, timeout=timeout_s)
        self._conn.connect()  # TLS too, for https: the socket is the connection's own
        self._sock = self._conn.sock
        auth = f"Authorization: Bearer {api_key}\r\n" if api_key else ""
        self._head = (
            f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
            f"{auth}"
        ).encode()
        self._buffer = bytearray()
        self.sent = 0
        self.answered = 0
        self.error: str | None = None

    def post(self, body: Any) -> None:
        if self.error is not None:
            raise RunFailed(self.error)
        data = json.dumps(body).encode()
        self._sock.sendall(self._head + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        self.sent += 1

    def wait_until(self, deadline: float) -> None:
        """Read answers as they come until `deadline` (time.monotonic())."""
        while (left := deadline - time.monotonic()) > 0:
            if self.answered >= self.sent or self.error is not None:
                time.sleep(left)  # nothing due: nothing to read
                return
            if self._readable(left):
                self._read()

    def _readable(self, timeout_s: float) -> bool:
        pending = getattr(self._sock, "pending", None)  # TLS may hold decrypted bytes
        if pending is not None and pending():
            return True
        return bool(select.select([self._sock], [], [], timeout_s)[0])

    def close(self, timeout_s: float = 30.0) -> None:
        """Read (up to `timeout_s`) every answer due, then close the connection."""
        deadline = time.monotonic() + timeout_s
        while self.answered < self.sent and self.error is None:
            left = deadline - time.monotonic()
            if left <= 0:
                self.error = (
                    f"{self.sent - self.answered} submissions unanswered after {timeout_s} s"
                )
            elif self._readable(left):
                self._read()
        self._conn.close()

    def _read(self) -> None:
        try:
            chunk = self._sock.recv(READ_BYTES)
        except OSError as exc:
            self.error = f"fake queue at {self.base_url} dropped the connection ({exc})"
            return
        if not chunk:
            self.error = f"fake queue at {self.base_url} closed the connection"
            return
        self._buffer += chunk
        while (answer := self._take_answer()) is not None:
            status, text = answer
            self.answered += 1
            if status >= 400 and self.error is None:
                self.error = f"fake queue answered {status} to a submission: {text[:200]}"

    def _take_answer(self) -> tuple[int, str] | None:
        """The buffer's first whole answer (status, body), removed; None: not all here yet."""
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = self._buffer[:end].decode("latin-1").split("\r\n")
        length = 0
        for line in head[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if len(self._buffer) < end + 4 + length:
            return None
        body = bytes(self._buffer[end + 4 : end + 4 + length])
        del self._buffer[: end + 4 + length]
        return int(head[0].split()[1]), body.decode(errors="replace")
