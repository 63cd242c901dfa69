"""Real HTTP servers on 127.0.0.1 (a listening socket, a thread per connection) that misbehave on purpose."""
from __future__ import annotations

import json
import socket
import threading
from typing import Callable

import pytest


class Connection:
    """One accepted connection: the request read, and ways to answer (or not)."""

    def __init__(self, sock: socket.socket, count: int, stop: threading.Event):
        self.sock, self.count, self.stop = sock, count, stop
        self.request_line, self.headers, self.body = self._read_request()

    def _read_request(self) -> tuple[str, dict[str, str], bytes]:
        data = b""
        while b"\r\n\r\n" not in data:
            piece = self.sock.recv(65536)
            if not piece:
                return "", {}, b""
            data += piece
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        while len(body) < int(headers.get("content-length", 0)):
            body += self.sock.recv(65536)
        return lines[0], headers, body

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def reply(self, status: int, payload, extra: str = "") -> None:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send(f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                  f"Connection: close\r\n{extra}\r\n".encode() + body)

    def trickle(self, data: bytes, every_s: float) -> None:
        """``data`` a byte at a time (then, if the test is still running, nothing more)."""
        for byte in data:
            if self.stop.wait(every_s):
                return
            self.send(bytes([byte]))

    def hold(self) -> None:
        """Keep the connection open, sending nothing, until the test ends."""
        self.stop.wait(60)

    def reset(self) -> None:
        """Close with a TCP reset (SO_LINGER 0) instead of an orderly shutdown."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        self.sock.close()


@pytest.fixture
def raw_server():
    """``start(handle)`` -> base URL ``http://127.0.0.1:<port>/v1``; ``handle(connection)`` answers each
    connection in its own thread. Everything is closed when the test ends."""
    stop = threading.Event()
    listeners: list[socket.socket] = []
    sockets: list[socket.socket] = []

    def start(handle: Callable[[Connection], None]) -> str:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        listeners.append(listener)
        counter = {"n": 0}

        def one(sock: socket.socket, count: int) -> None:
            try:
                handle(Connection(sock, count, stop))
            except OSError:
                pass
            finally:
                try:
                    sock.close()
                except OSError:
                    pass

        def serve() -> None:
            while not stop.is_set():
                try:
                    sock, _ = listener.accept()
                except OSError:
                    return
                sockets.append(sock)
                counter["n"] += 1
                threading.Thread(target=one, args=(sock, counter["n"]), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}/v1"

    yield start
    stop.set()
    for item in listeners + sockets:
        try:
            item.close()
        except OSError:
            pass

