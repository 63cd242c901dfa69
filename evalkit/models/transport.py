"""One HTTP request held to a wall-clock deadline, its failures told apart as worth retrying or not.

``requests`` bounds each socket operation (``timeout``), not a whole request: a server that trickles its
headers or its body a byte at a time, each byte inside the per-read timeout, would hold a call for ever.
Here every socket a request opens is registered with a watchdog; when the deadline passes, the watchdog
shuts the sockets down, the blocked read returns at once and the request fails as "still arriving when the
call's deadline passed". Connections are made through ``requests`` (so proxies from the environment and the
CA bundle are used as before) with urllib3 connection classes that register their sockets; SOCKS proxies use
their own classes and are bounded by the per-read timeout only. Name resolution is not interruptible.

:func:`post_json` never raises for a transport failure: it returns a :class:`Failure` whose message is
the exception's class and text (the caller redacts it), so no raw exception travels further.
"""
from __future__ import annotations

import http.client
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping

import requests
import requests.auth
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = ["Reply", "Failure", "post_json", "DEADLINE_PASSED"]

DEADLINE_PASSED = "Timeout: the reply was still arriving when the call's deadline passed"

# Failures of the request itself, not of the network: retrying cannot help.
_PERMANENT = (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema, requests.exceptions.InvalidSchema,
              requests.exceptions.InvalidHeader, requests.exceptions.URLRequired,
              requests.exceptions.InvalidJSONError, urllib3.exceptions.LocationParseError, ValueError, TypeError)
# Stalls, drops and resets, wherever they happen (connect, headers, body): retried like a 5xx.
_TRANSIENT = (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, http.client.HTTPException, OSError)


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Mapping[str, str]
    body: bytes


@dataclass(frozen=True)
class Failure:
    """A request that got no reply: ``message`` is ``"<exception class>: <text>"`` (not yet redacted)."""

    message: str
    retryable: bool


class _Watchdog:
    """The sockets of one request, shut down when its deadline passes (from the timer's thread)."""

    def __init__(self) -> None:
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.fired = False

    def watch(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            fired = self.fired
        if fired:
            _shut(sock)

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        # socket.socket's own shutdown, also for an SSL socket: it acts on the descriptor and leaves the TLS
        # object alone for the thread that is reading from it.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass  # already closed, or a socket detached by the TLS wrapper (its successor is watched too)


_local = threading.local()  # the watchdog of the request running in this thread


def _watch(sock: Any) -> None:
    watchdog = getattr(_local, "watchdog", None)
    if watchdog is not None:
        watchdog.watch(sock)


class _Watched:
    """Registers the socket of a new connection (and its TLS successor) with the thread's watchdog."""

    def _new_conn(self):  # type: ignore[no-untyped-def]
        sock = super()._new_conn()  # type: ignore[misc]
        _watch(sock)
        return sock

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        _watch(self.sock)  # type: ignore[attr-defined]


class _WatchedHTTPConnection(_Watched, HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, HTTPSConnection):
    pass


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_POOLS = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}


class _WatchedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **kwargs: Any):  # type: ignore[no-untyped-def]
        manager = super().proxy_manager_for(proxy, **kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = _POOLS
        return manager


def _read_until(response: requests.Response, deadline: float) -> bytes:
    """The response body, read in chunks; past ``deadline`` (monotonic seconds) the read stops with a
    timeout, however steadily the server trickles."""
    parts, raw = [], response.raw
    raw.decode_content = True  # a gzip-encoded body arrives decoded
    while True:
        piece = raw.read1(65536)  # what has arrived (at most one read from the socket), not a full chunk
        if not piece:
            return b"".join(parts)
        parts.append(piece)
        if time.monotonic() > deadline:
            response.close()
            raise requests.Timeout("the reply was still arriving when the call's deadline passed")


class _Authorization(requests.auth.AuthBase):
    """Sets the ``Authorization`` header to the value given — and, being an auth object, keeps requests from
    putting credentials of its own (from the URL or ~/.netrc) in its place."""

    def __init__(self, value: str):
        self._value = value

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = self._value
        return request

    def __repr__(self) -> str:
        return "_Authorization(***)"


def post_json(url: str, body: Any, *, headers: Mapping[str, str], authorization: str | None, timeout_s: float,
              deadline: float) -> Reply | Failure:
    """POST ``body`` as JSON to ``url`` (with the ``Authorization`` header value given, if any) and read the
    whole reply before ``deadline`` (``time.monotonic()`` seconds), each socket operation waiting at most
    ``timeout_s``."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return Failure(DEADLINE_PASSED, retryable=True)
    auth = _Authorization(authorization) if authorization else None
    watchdog = _Watchdog()
    timer = threading.Timer(remaining, watchdog.fire)
    timer.daemon = True
    _local.watchdog = watchdog
    timer.start()
    try:
        with requests.Session() as session:
            adapter = _WatchedAdapter()
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            response = session.post(url, json=body, headers=dict(headers), auth=auth,
                                    timeout=min(timeout_s, remaining), stream=True)
            with response:
                data = _read_until(response, deadline)
            if watchdog.fired:  # a close-delimited body cut by the watchdog reads as a short, "complete" one
                return Failure(DEADLINE_PASSED, retryable=True)
            return Reply(response.status_code, response.headers, data)
    except _PERMANENT as error:
        return Failure(_described(error), retryable=False)
    except _TRANSIENT as error:
        return Failure(DEADLINE_PASSED if watchdog.fired else _described(error), retryable=True)
    except Exception as error:  # noqa: BLE001 — unforeseen: reported (redacted by the caller), never raised raw
        return Failure(_described(error), retryable=False)
    finally:
        timer.cancel()
        _local.watchdog = None


def _described(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"
