"""Deadlines are wall-clock bounds over connect, headers and body; every transport failure is retried like a
5xx and then raised as a BackendError naming the endpoint (real servers on 127.0.0.1, see conftest.py)."""
from __future__ import annotations

import json
import time

import pytest

from evalkit.models import BackendError, OpenAICompatibleBackend, RetryPolicy

PROMPT = [[{"role": "user", "content": "Hi"}]]
SLACK_S = 1.5  # what a call may run past its deadline_s (thread start-up, the last read returning)


def ok_body(content: str = "Fine.") -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode()


def backend(url: str, **retry) -> OpenAICompatibleBackend:
    return OpenAICompatibleBackend("m", url, api_key_env=None, retry=RetryPolicy(**{"backoff_s": 0.01, **retry}))


def timed_failure(model: OpenAICompatibleBackend) -> tuple[BackendError, float]:
    started = time.monotonic()
    with pytest.raises(BackendError) as failure:
        model.generate(PROMPT)
    return failure.value, time.monotonic() - started


def assert_clean(error: BaseException) -> None:
    """A BackendError that carries no raw library exception with it."""
    assert type(error) is BackendError and error.__cause__ is None and error.__context__ is None
    assert error.__suppress_context__ or error.__context__ is None


def test_headers_trickled_byte_by_byte_are_cut_at_the_deadline(raw_server):
    # Each byte arrives well inside the per-read timeout: only a wall-clock bound can stop this.
    url = raw_server(lambda c: c.trickle(b"HTTP/1.1 200 OK\r\nX-Slow: " + b"x" * 10_000, every_s=0.05))
    model = backend(url, timeout_s=1.0, deadline_s=2.0, max_retries=5)
    error, elapsed = timed_failure(model)
    assert elapsed < 2.0 + SLACK_S, elapsed
    assert f"{url}/chat/completions failed after 1 attempts" in str(error)
    assert "still arriving when the call's deadline passed" in str(error) and model.attempts == 1
    assert_clean(error)


def test_a_body_that_stalls_is_retried_within_the_deadline_then_named(raw_server):
    def stall(c):
        c.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"cho")
        c.hold()

    url = raw_server(stall)
    model = backend(url, timeout_s=0.4, deadline_s=2.0, max_retries=10)
    error, elapsed = timed_failure(model)
    assert elapsed < 2.0 + SLACK_S, elapsed
    # A stall inside the body is a read timeout: retried (not raised raw after one attempt), then named.
    assert 2 <= model.attempts <= 6 and f"{url}/chat/completions failed after {model.attempts} attempts" in str(error)
    assert "Timeout" in error.cause
    assert_clean(error)


def test_a_stalled_body_with_a_long_read_timeout_still_ends_at_the_deadline(raw_server):
    def stall(c):
        c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{")
        c.hold()

    model = backend(raw_server(stall), timeout_s=30.0, deadline_s=1.5, max_retries=3)
    error, elapsed = timed_failure(model)
    assert elapsed < 1.5 + SLACK_S, elapsed
    assert "deadline passed" in str(error)


@pytest.mark.parametrize("drop", ["content-length", "chunked", "reset", "no-reply"])
def test_a_connection_dropped_mid_reply_is_retried_like_a_5xx(raw_server, drop):
    def handle(c):
        if c.count > 1:
            c.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(ok_body()) + ok_body())
        elif drop == "content-length":
            c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"choices\": [")
        elif drop == "chunked":
            c.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100\r\n{\"choi")
        elif drop == "reset":
            c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{")
            time.sleep(0.05)
            c.reset()
        # "no-reply": the connection closes before any byte of a reply

    model = backend(raw_server(handle), timeout_s=2.0, deadline_s=10.0)
    assert model.generate(PROMPT)[0].texts == ["Fine."] and model.attempts == 2


def test_a_connection_always_dropped_mid_body_ends_as_a_backend_error(raw_server):
    url = raw_server(lambda c: c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"choices\""))
    model = backend(url, timeout_s=2.0, deadline_s=10.0, max_retries=2)
    error, _ = timed_failure(model)
    assert model.attempts == 3 and f"{url}/chat/completions failed after 3 attempts" in str(error)
    assert any(name in error.cause for name in ("IncompleteRead", "ProtocolError", "ChunkedEncodingError"))
    assert_clean(error)


def test_retry_after_and_backoff_never_sleep_past_the_deadline(raw_server):
    url = raw_server(lambda c: c.reply(503, {"error": "busy"}, extra="Retry-After: 30\r\n"))
    model = backend(url, timeout_s=1.0, deadline_s=1.0, max_retries=3)
    error, elapsed = timed_failure(model)
    assert elapsed < 1.0 + SLACK_S and "HTTP 503" in str(error)


def test_a_refused_connection_is_retried_then_named():
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    probe.close()  # nothing listens there
    model = backend(url, timeout_s=1.0, deadline_s=5.0, max_retries=2)
    error, _ = timed_failure(model)
    assert model.attempts == 3 and "ConnectionError" in error.cause
    assert_clean(error)


def test_the_deadline_holds_over_https_too(tmp_path, monkeypatch):
    """The watchdog shuts the TLS socket: a server trickling its headers over HTTPS is cut alike."""
    import shutil
    import socket
    import ssl
    import subprocess
    import threading

    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a test certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    stop = threading.Event()

    def serve():
        try:
            connection = context.wrap_socket(listener.accept()[0], server_side=True)
            connection.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"x" * 10_000:
                if stop.wait(0.05):
                    break
                connection.sendall(bytes([byte]))
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    try:
        model = backend(f"https://127.0.0.1:{listener.getsockname()[1]}/v1", timeout_s=1.0, deadline_s=2.0,
                        max_retries=0)
        error, elapsed = timed_failure(model)
        assert elapsed < 2.0 + SLACK_S and "deadline passed" in str(error)
    finally:
        stop.set()
        listener.close()


def test_a_batch_larger_than_its_concurrency_ends_within_one_deadline():
    """A stalling server: the worker that failed must not start the next queued prompt, which would run to a
    deadline of its own (a batch of 8 at concurrency 2 took twice its deadline)."""
    import socket
    import threading
    import time

    from evalkit.models import BackendError, OpenAICompatibleBackend

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    stop, held = threading.Event(), []

    def accept():  # accept and never answer
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        backend = OpenAICompatibleBackend("m", url, api_key_env=None, max_concurrency=2, deadline_s=2.0,
                                          timeout_s=1.0, backoff_s=0.0)
        started = time.monotonic()
        with pytest.raises(BackendError):
            backend.generate([[{"role": "user", "content": f"q{i}"}] for i in range(8)])
        assert time.monotonic() - started < 2.0 + 1.5
    finally:
        stop.set()
        for sock in held:
            sock.close()
        listener.close()
