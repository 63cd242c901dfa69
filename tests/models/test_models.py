"""The model door: cache and telemetry, the HTTP backend against scripted servers, judges' parsing."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from evalkit.models.cache import CallCache
from evalkit.upheld.llm_judges import JUDGES, judge
from evalkit.models import BackendError, CachedBackend, OpenAICompatibleBackend
from tests.fakes import FakeChatServer, ScriptedBackend, chat_reply

PROMPTS = [[{"role": "user", "content": f"question {i}"}] for i in range(3)]


@pytest.fixture
def items() -> pd.DataFrame:
    return pd.DataFrame({"item_id": ["a|m", "b|m"], "history": [[("user", "Hi")], [("user", "Yo")]],
                         "reference": ["Hello.", "Hey."], "candidate": ["Hello!", "Go away."]})


def test_repeated_calls_never_reach_the_model(tmp_path):
    backend = ScriptedBackend(lambda prompt: "Yes")
    cached = CachedBackend(backend, CallCache(tmp_path / "calls.sqlite"))
    first = cached.label_probs(PROMPTS, ["Yes", "No"])
    assert backend.calls == 3
    again = CachedBackend(backend, CallCache(tmp_path / "calls.sqlite"))  # a new run on the same cache
    assert again.label_probs(PROMPTS + [[{"role": "user", "content": "new"}]], ["Yes", "No"])[:3] == first
    assert backend.calls == 4  # only the new prompt was sent
    summary = again.telemetry.summary().iloc[0]
    assert (summary["calls"], summary["cache_hits"]) == (4, 3)
    assert cached.generate(PROMPTS, max_tokens=5)[0].texts == ["Yes"]
    assert cached.generate(PROMPTS, max_tokens=6) and backend.calls == 10  # other parameters, other key


def test_cache_stats_and_purge(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    CachedBackend(ScriptedBackend(lambda p: "No"), cache).label_probs(PROMPTS, ["Yes", "No"])
    assert cache.stats() == [{"backend": "scripted:test", "operation": "label_probs", "entries": 3,
                              "bytes": cache.stats()[0]["bytes"]}]
    assert cache.purge("someone-else") == 0 and cache.purge() == 3 and len(cache) == 0


def test_a_junk_store_file_is_named_not_a_traceback(tmp_path, capsys):
    from evalkit.models.cache import StoreFileError
    from evalkit.cli.commands import main
    from evalkit.upheld.metrics import MetricStore
    from evalkit.userproxy.runstore import RunStore

    junk = tmp_path / "calls.sqlite"
    junk.write_bytes(b"this is not a database, just some bytes " * 100)
    for opener, what in ((CallCache, "model-call cache"), (MetricStore, "metric store"), (RunStore, "run store")):
        with pytest.raises(StoreFileError, match=rf"{junk}: not an evalkit .*{what} .*Move the file away"):
            opener(junk)
    assert main(["cache", "stats", "--path", str(junk)]) == 2
    assert f"{junk}: not an evalkit model-call cache" in capsys.readouterr().err
    import sqlite3

    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as connection:  # a real database of someone else's, with a "calls" table
        connection.execute("CREATE TABLE calls (who TEXT, seconds REAL)")
    with pytest.raises(StoreFileError, match=rf"{foreign}: its table 'calls' has the columns \['who', 'seconds'\]"):
        CallCache(foreign)
    assert main(["cache", "stats", "--path", str(tmp_path / "nowhere" / "calls.sqlite")]) == 2
    assert "no such cache file" in capsys.readouterr().err and not (tmp_path / "nowhere").exists()


def test_http_backend_retries_500_then_succeeds(tmp_path):
    server = FakeChatServer(lambda body, count: (500, {"error": "busy"}) if count <= 2
                            else (200, chat_reply("Yes", [("Yes", math.log(0.7)), ("No", math.log(0.2)),
                                                          ("Maybe", math.log(0.1))])))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url, backoff_s=0.01, max_retries=3)
        [result] = backend.label_probs(PROMPTS[:1], ["Yes", "No"])
        assert backend.attempts == 3 and len(server.requests) == 3
        assert result.probs == pytest.approx({"Yes": 0.7 / 0.9, "No": 0.2 / 0.9})
        assert result.label_mass == pytest.approx(0.9) and result.method == "logprobs"
        assert server.requests[0]["logprobs"] is True and server.requests[0]["max_tokens"] == 1
    finally:
        server.close()


def test_http_backend_down_gives_a_clear_error_and_caches_nothing(tmp_path):
    server = FakeChatServer(lambda body, count: (200, chat_reply("x")))
    url = server.base_url
    server.close()  # nothing listens there any more
    backend = OpenAICompatibleBackend("m", url, backoff_s=0.01, max_retries=2, timeout_s=2)
    cache = CallCache(tmp_path / "calls.sqlite")
    with pytest.raises(BackendError, match=rf"{url}/chat/completions failed after 3 attempts"):
        CachedBackend(backend, cache).generate(PROMPTS[:1])
    assert backend.attempts == 3 and len(cache) == 0


def test_http_client_errors_are_not_retried():
    server = FakeChatServer(lambda body, count: (400, {"error": "bad model"}))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url, backoff_s=0.01)
        with pytest.raises(BackendError, match="rejected the request .*HTTP 400"):
            backend.generate(PROMPTS[:1])
        assert backend.attempts == 1
    finally:
        server.close()


def test_http_without_logprobs_falls_back_to_parsing_a_generation():
    server = FakeChatServer(lambda body, count: (200, chat_reply("No, they differ.")))
    try:
        [result] = OpenAICompatibleBackend("m", server.base_url).label_probs(PROMPTS[:1], ["Yes", "No"])
        assert result.method == "generated" and result.probs == {"Yes": 0.0, "No": 1.0}
        assert server.requests[-1]["max_tokens"] == 8
    finally:
        server.close()


def test_api_key_is_sent_but_never_stored(tmp_path, monkeypatch):
    secret = "sk-test-" + "9" * 20
    monkeypatch.setenv("EVALKIT_TEST_KEY", secret)
    server = FakeChatServer(lambda body, count: (200, chat_reply("Yes")))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url, api_key_env="EVALKIT_TEST_KEY")
        cache = CallCache(tmp_path / "calls.sqlite")
        CachedBackend(backend, cache).generate(PROMPTS[:1])
        assert server.headers[0]["Authorization"] == f"Bearer {secret}"
        cache.close()
        for path in tmp_path.iterdir():
            assert secret.encode() not in path.read_bytes()
        assert secret not in backend.name
    finally:
        server.close()


def test_malformed_verdict_is_an_abstention_with_its_text(items):
    backend = ScriptedBackend(lambda prompt: "I would rather talk about the weather.")
    for name in ("yes_no_explain", "likert_explain", "yes_no"):
        result = judge(items, name, backend)
        assert result["status"].tolist() == ["abstain", "abstain"]
        assert result["score"].isna().all()
        assert result["raw_text"].iloc[0] == "I would rather talk about the weather."


def test_judge_scores_are_expected_values_and_parsed_verdicts(items):
    likert = judge(items, "likert", ScriptedBackend(lambda prompt: "4"))
    assert likert["score"].tolist() == pytest.approx([0.025 * (1 + 2 + 3 + 5) + 0.9 * 4] * 2)
    explained = judge(items, "yes_no_explain", ScriptedBackend(lambda p: "Verdict: No\nReason: different."))
    assert explained["score"].tolist() == [0.0, 0.0] and set(explained["method"]) == {"generated"}
    reasonable = judge(items, "instructions_reasonable", ScriptedBackend(lambda p: "5"))
    assert reasonable["target"].iloc[0] == "reasonable"


def test_reference_free_judge_does_not_see_the_reference(items):
    seen = []
    judge(items, "instructions_reasonable", ScriptedBackend(lambda prompt: seen.append(prompt) or "5"))
    assert all("Hello." not in prompt for prompt in seen[:1]) and "Hello!" in seen[0]
    assert all(spec.uses_reference for name, spec in JUDGES.items() if name != "instructions_reasonable")


def test_cache_cli(tmp_path, capsys):
    from evalkit import cli

    path = tmp_path / "calls.sqlite"
    CachedBackend(ScriptedBackend(lambda p: "No"), CallCache(path)).generate(PROMPTS)
    assert cli.main(["cache", "stats", "--path", str(path)]) == 0
    out = capsys.readouterr().out
    assert "3 cached calls" in out and "scripted:test" in out
    assert cli.main(["cache", "purge", "--path", str(path)]) == 0
    assert "purged 3" in capsys.readouterr().out and len(CallCache(path)) == 0


# --------------------------------------------------------------------------- bad 200 replies, secrets, hangs

def test_a_200_reply_that_is_not_json_is_retried_and_named(tmp_path):
    server = FakeChatServer(lambda body, count: (200, b"<html>proxy error</html>") if count == 1
                            else (200, chat_reply("Fine.")))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url, backoff_s=0.01)
        assert backend.generate(PROMPTS[:1])[0].texts == ["Fine."] and backend.attempts == 2
    finally:
        server.close()
    server = FakeChatServer(lambda body, count: (200, b"not json at all"))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url, backoff_s=0.01, max_retries=1)
        with pytest.raises(BackendError, match=rf"{server.base_url}/chat/completions failed after 2 attempts.*"
                                               r"HTTP 200 but the body is not JSON \('not json at all'\)"):
            backend.generate(PROMPTS[:1])
    finally:
        server.close()


def test_a_200_reply_without_choices_is_retried_then_an_error_naming_the_endpoint():
    server = FakeChatServer(lambda body, count: (200, {"object": "error", "message": "overloaded"}))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url, backoff_s=0.01, max_retries=2)
        with pytest.raises(BackendError, match=rf"{server.base_url}/chat/completions failed after 3 attempts.*"
                                               "HTTP 200 but the reply has no choices"):
            backend.label_probs(PROMPTS[:1], ["Yes", "No"])
        assert backend.attempts == 3
    finally:
        server.close()


def test_an_empty_reply_is_retried_and_never_cached(tmp_path):
    glitch = {"on": True}
    server = FakeChatServer(lambda body, count: (200, chat_reply("" if glitch["on"] else "Yes, it fits.")))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url, backoff_s=0.01, max_retries=1)
        cache = CallCache(tmp_path / "calls.sqlite")
        first = CachedBackend(backend, cache).generate(PROMPTS[:1])[0]
        assert first.texts == [""] and "empty content 2 time(s)" in first.error and len(cache) == 0
        # The same for label probabilities from an endpoint without log-probabilities: an abstention, uncached.
        [verdict] = CachedBackend(backend, cache).label_probs(PROMPTS[1:2], ["Yes", "No"])
        assert verdict.probs is None and verdict.error and len(cache) == 0
        glitch["on"] = False
        again = CachedBackend(backend, cache).generate(PROMPTS[:1])[0]  # a rerun asks again and repairs it
        assert again.texts == ["Yes, it fits."] and again.error is None and len(cache) == 1
    finally:
        server.close()


def test_secrets_never_reach_errors_names_or_the_cache(tmp_path, monkeypatch, capsys):
    from evalkit.cli.commands import main

    secret = "sk-test-" + "7" * 24
    monkeypatch.setenv("EVALKIT_TEST_KEY", secret)
    # A server that echoes the request headers in its error body.
    server = FakeChatServer(lambda body, count: (503, {"error": f"echo: Authorization: Bearer {secret}"}))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url, api_key_env="EVALKIT_TEST_KEY", backoff_s=0.01,
                                          max_retries=1)
        with pytest.raises(BackendError) as failure:
            backend.generate(PROMPTS[:1])
        assert secret not in str(failure.value) and "Bearer ***" in str(failure.value)
    finally:
        server.close()
    inline = "inline-" + "5" * 20
    server = FakeChatServer(lambda body, count: (200, chat_reply("Yes")))
    try:
        url = server.base_url.replace("http://", f"http://user:{inline}@") + f"?api_key={inline}"
        backend = OpenAICompatibleBackend("m", url.split("?")[0], api_key_env=None)
        assert inline not in backend.name and "***@" in backend.name
        cache = CallCache(tmp_path / "calls.sqlite")
        CachedBackend(backend, cache).generate(PROMPTS[:1])
        query = OpenAICompatibleBackend("m", url, api_key_env=None)
        assert inline not in query.name and "api_key=***" in query.name
        cache.close()
        assert main(["cache", "stats", "--path", str(tmp_path / "calls.sqlite")]) == 0
        assert inline not in capsys.readouterr().out
        for path in tmp_path.iterdir():
            assert inline.encode() not in path.read_bytes()
    finally:
        server.close()


def test_a_server_that_never_answers_costs_a_bounded_time_and_says_so():
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)  # accepts connections (the kernel does), never reads or answers
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    try:
        backend = OpenAICompatibleBackend("m", url, backoff_s=0.01, max_retries=5, timeout_s=0.3, deadline_s=0.8,
                                          max_concurrency=2)
        with pytest.raises(BackendError, match=r"timeout_s=0.3 s, a whole call at most deadline_s=0.8 s.*"
                                               r"last error: (ReadTimeout|ConnectTimeout|Timeout)"):
            backend.generate(PROMPTS * 4)  # 12 prompts
        # Without the deadline each prompt would try 6 times and all 12 would run (72 requests); the deadline
        # cuts each call to at most 4 tries (0.8 s / 0.3 s), and the prompts not yet started are cancelled.
        assert backend.attempts <= 4 * 4
    finally:
        listener.close()


def test_parsed_verdicts_are_flagged_on_paireval_scores():
    from evalkit.models import ParsedVerdicts
    from evalkit.paireval import LMJudge, directeval_scores, paireval_scores

    server = FakeChatServer(lambda body, count: (200, chat_reply("A is better." if "A" in str(body) else "Yes")))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url, api_key_env=None)
        with pytest.warns(ParsedVerdicts, match="2 of 2 PairEval verdicts are parsed one-hot answers"):
            paireval_scores([["Hi."]], ["Hello!"], [(["Hey."], "Yo.")], LMJudge(backend))
        with pytest.warns(ParsedVerdicts, match="1 of 1 DirectEval verdicts"):
            directeval_scores([["Hi."]], ["Hello!"], LMJudge(backend))
    finally:
        server.close()


@pytest.mark.parametrize("reply, problem", [
    ({"choices": [{"message": {"content": 5}}]}, r"content is not text \(int\)"),
    ({"choices": [{"message": {"content": "Yes"}, "logprobs": "weird"}]}, "logprobs are malformed"),
    ({"choices": [{"message": {"content": "Yes"}, "logprobs": {"content": [{"top_logprobs": ["Yes"]}]}}]},
     "top_logprobs are malformed"),
    ({"choices": [{"message": {"content": "Yes"},
                   "logprobs": {"content": [{"top_logprobs": [{"token": "Yes", "logprob": 1e308}]}]}}]},
     r"invalid log-probability \(1e\+308\)"),
])
def test_malformed_fields_of_a_200_reply_are_retried_then_named(reply, problem):
    server = FakeChatServer(lambda body, count: (200, reply))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url, backoff_s=0.01, max_retries=1, api_key_env=None)
        with pytest.raises(BackendError, match=rf"{server.base_url}/chat/completions failed after 2 attempts.*"
                                               rf"HTTP 200 but .*{problem}"):
            backend.label_probs(PROMPTS[:1], ["Yes", "No"])
    finally:
        server.close()


def test_a_server_that_trickles_its_reply_is_cut_at_the_deadline():
    import socket
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
            try:
                while not stop.is_set():
                    connection.sendall(b" ")  # one byte at a time, well inside the per-read timeout
                    time.sleep(0.05)
            except OSError:
                pass
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        backend = OpenAICompatibleBackend("m", f"http://127.0.0.1:{listener.getsockname()[1]}/v1", api_key_env=None,
                                          backoff_s=0.01, max_retries=3, timeout_s=1, deadline_s=1.5)
        started = time.monotonic()
        with pytest.raises(BackendError, match="still arriving when the call's deadline passed"):
            backend.generate(PROMPTS[:1])
        assert backend.attempts == 1 and time.monotonic() - started < 30  # bounded by deadline_s, not the trickle
    finally:
        stop.set()
        listener.close()


def test_a_query_string_in_the_base_url_stays_after_the_path():
    server = FakeChatServer(lambda body, count: (200, chat_reply("Yes")))
    try:
        backend = OpenAICompatibleBackend("m", server.base_url + "?api-version=2024-06-01", api_key_env=None)
        assert backend.generate(PROMPTS[:1])[0].texts == ["Yes"]
        # Shown with every query value masked (a query may carry a signature or a token); the
        # request itself goes out with the real query (tests/models/test_secrets.py checks what arrives).
        assert backend.endpoint == server.base_url + "/chat/completions?api-version=***"
    finally:
        server.close()


class _EachCounting(ScriptedBackend):
    """A scripted backend with a ``label_probs_each`` of its own, counting the calls it gets."""

    def __init__(self, answer):
        super().__init__(answer)
        self.each_calls = 0

    def label_probs_each(self, prompts, labels):
        self.each_calls += 1
        return [self.label_probs([prompt], own)[0] for prompt, own in zip(prompts, labels)]


def test_several_judges_go_to_a_backend_in_one_call_and_equal_one_judge_at_a_time(items, tmp_path):
    from evalkit.upheld.llm_judges import run_judges

    def answer(text):
        return "Yes" if "same information" in text and "Hello!" in text else "4" if "1 to 5" in text else "No"

    one_at_a_time = [judge(items, name, ScriptedBackend(answer)) for name in ("yes_no", "likert")]
    backend = _EachCounting(answer)
    together = run_judges(items, ["yes_no", "likert"], CachedBackend(backend, CallCache(tmp_path / "c.sqlite")))
    assert backend.each_calls == 1 and backend.calls == 4
    for alone, joint in zip(one_at_a_time, together):
        pd.testing.assert_frame_equal(alone, joint)
    assert together[0]["score"].tolist() == pytest.approx([0.9, 0.1]) and together[1]["score"].tolist() == \
        pytest.approx([0.025 * (1 + 2 + 3 + 5) + 0.9 * 4] * 2)
    # The answers are stored under the keys label_probs gives: one judge asked alone later reads them.
    again = ScriptedBackend(answer)
    assert judge(items, "likert", CachedBackend(again, CallCache(tmp_path / "c.sqlite")))["score"].tolist() == \
        together[1]["score"].tolist() and again.calls == 0


def test_label_probs_each_without_a_method_of_its_own_asks_once_per_label_set():
    from evalkit.models import label_probs_each

    backend = ScriptedBackend(lambda text: "Yes")
    results = label_probs_each(backend, PROMPTS, [["Yes", "No"], ["1", "2"], ["Yes", "No"]])
    assert [sorted(r.probs) if r.probs else None for r in results] == [["No", "Yes"], None, ["No", "Yes"]]
    with pytest.raises(ValueError, match="3 prompts but 2 label sets"):
        label_probs_each(backend, PROMPTS, [["Yes", "No"]] * 2)


def test_a_sampled_answer_drawn_another_way_is_not_answered_from_the_cache(tmp_path):
    class Drawing(ScriptedBackend):
        sampling_scheme = "scheme-a"

    backend = Drawing(lambda text: "hello")
    cached = CachedBackend(backend, CallCache(tmp_path / "calls.sqlite"))
    cached.generate(PROMPTS, temperature=1.0, seed=1)
    cached.generate(PROMPTS, temperature=0.0)
    assert backend.calls == 6
    backend.sampling_scheme = "scheme-b"
    cached.generate(PROMPTS, temperature=0.0)  # greedy answers do not depend on how samples are drawn
    assert backend.calls == 6
    cached.generate(PROMPTS, temperature=1.0, seed=1)
    assert backend.calls == 9
