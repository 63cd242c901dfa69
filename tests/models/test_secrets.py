"""No credential in any output of the model door: exceptions (text, repr, traceback), backend names, cache
rows and `cache stats`, the user-proxy run store — whatever the URL, the server or a length limit does."""
from __future__ import annotations

import base64
import json
import sqlite3
import textwrap
import traceback
import unicodedata
from urllib.parse import quote

import pytest

from evalkit.models.cache import CallCache
from evalkit.models import (BackendConfigError, BackendError, CachedBackend, OpenAICompatibleBackend, open_backend,
                            redact)
from evalkit.models.redaction import MIN_FRAGMENT

PROMPT = [[{"role": "user", "content": "Hi"}]]
KEY = "sk-live-" + "Zq8XwV3nR7tY2uP6mK4j"  # the API key, in EVALKIT_TEST_KEY
PASSWORD = "pw-Hh7Kk2Ll9Mm"
SIG, CODE, BARE = "sigA1b2C3d4E5", "codeF6g7H8i9", "bareJ0k1L2m3"


def fragments(secret: str) -> list[str]:
    """Every piece of ``secret`` of MIN_FRAGMENT characters: none may appear in an output."""
    return [secret[i:i + MIN_FRAGMENT] for i in range(len(secret) - MIN_FRAGMENT + 1)]


def assert_no_secret(text: str, *secrets: str) -> None:
    for secret in secrets or (KEY, PASSWORD, SIG, CODE, BARE):
        for piece in fragments(secret):
            assert piece not in text, f"{piece!r} (of {secret!r}) leaked in {text!r}"


def error_texts(error: BaseException) -> str:
    """Everything an error shows: its text, repr, cause string and the full printed traceback."""
    return "\n".join([str(error), repr(error), str(getattr(error, "cause", "")),
                      "".join(traceback.format_exception(error))])


def ok_body(content: str = "Fine.") -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()


# --------------------------------------------------------------------------- the function itself

def test_redact_masks_user_info_every_query_value_and_key_shapes():
    assert redact("http://alice:pw@h:8/v1?sig=abc&code=42&flag;x#frag") == "http://***@h:8/v1?sig=***&code=***&***;***#***"
    assert redact("url: /v1/chat/completions?token=T0k (Caused by x)") == "url: /v1/chat/completions?token=*** (Caused by x)"
    assert redact("https://ghp_0123456789abcdefABCD@github.com/x") == "https://***@github.com/x"
    for shape in ("Bearer abc.def", "sk-abcdef012345", "hf_" + "a" * 20, "AKIA" + "A" * 16, "AIza" + "b" * 35,
                  "xoxb-1234567890-abc", "eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeKKF2Q"):
        assert shape[5:] not in redact(f"echo {shape} here"), shape
    assert redact("nothing here: what? yes, 5 > 3 & 2") == "nothing here: what? yes, 5 > 3 & 2"
    once = redact("http://a:b@h/v1?k=v Bearer x")
    assert redact(once) == once  # idempotent: masking a masked text changes nothing


@pytest.mark.parametrize("cut", range(MIN_FRAGMENT, len(KEY)))
def test_a_secret_cut_anywhere_is_masked_in_part(cut):
    head, tail = KEY[:cut], KEY[-cut:]
    assert_no_secret(redact(f"HTTP 401: {{'detail': 'bad key {head}", [KEY]), KEY)  # cut by a length limit
    assert_no_secret(redact(f"{tail}' was refused", [KEY]), KEY)  # a text that starts inside the key
    assert_no_secret(redact(f"middle {KEY[2:cut]}{KEY[2:cut]} twice", [KEY]), KEY)


def test_a_secret_is_masked_bare_quoted_and_escaped_but_short_pieces_are_not_secrets():
    odd = "p@ss/w0rd+Zz"
    for written in (odd, "p%40ss%2Fw0rd%2BZz", json.dumps(odd)[1:-1]):
        assert_no_secret(redact(f"server echoed {written}!", [odd]), odd)
    # Fewer than MIN_FRAGMENT characters of a secret are not masked in free text (they would mask words).
    assert redact("the word Zq8Xw", [KEY]) == "the word Zq8Xw"


# --------------------------------------------------------------------------- the HTTP backend

def test_a_bad_port_in_a_url_with_credentials_is_refused_without_echoing_them():
    url = f"http://user:{PASSWORD}@127.0.0.1:99999/v1?key={SIG}"
    for build in (lambda: OpenAICompatibleBackend("m", url), lambda: open_backend("openai", "m", base_url=url)):
        with pytest.raises(BackendConfigError) as failure:
            build()
        error = failure.value
        assert isinstance(error, BackendError) and isinstance(error, ValueError)
        assert "port" in str(error) and "http://***@127.0.0.1:99999/v1?key=***" in str(error)
        assert error.__cause__ is None and error.__context__ is None
        assert_no_secret(error_texts(error), PASSWORD, SIG)
    for bad in ("not a url", f"ftp://u:{PASSWORD}@h/v1", "http:///v1", f"http://u:{PASSWORD}@[::1/v1"):
        with pytest.raises(BackendConfigError) as failure:
            OpenAICompatibleBackend("m", bad)
        assert_no_secret(error_texts(failure.value), PASSWORD)


@pytest.mark.parametrize("raised", ["invalid-url", "runtime", "protocol"])
def test_an_unforeseen_library_error_leaves_as_a_redacted_backend_error(monkeypatch, raised):
    import requests
    import urllib3

    monkeypatch.setenv("EVALKIT_TEST_KEY", KEY)
    text = f"Failed to parse: http://user:{PASSWORD}@h/v1/chat/completions?sig={SIG} sent {KEY}"
    error_class = {"invalid-url": requests.exceptions.InvalidURL, "runtime": RuntimeError,
                   "protocol": urllib3.exceptions.ProtocolError}[raised]

    def explode(*args, **kwargs):
        raise error_class(text)

    monkeypatch.setattr(requests.Session, "post", explode)
    model = OpenAICompatibleBackend("m", f"http://127.0.0.1:9/v1?sig={SIG}", api_key_env="EVALKIT_TEST_KEY",
                                    backoff_s=0.0, max_retries=1, deadline_s=5)
    with pytest.raises(BackendError) as failure:
        model.generate(PROMPT)
    error = failure.value
    assert type(error) is BackendError and error.__cause__ is None and error.__context__ is None
    assert error_class.__name__ in error.cause
    assert model.attempts == (2 if raised == "protocol" else 1)  # a transport error is retried, the others not
    assert_no_secret(error_texts(error))


def test_a_server_echoing_the_key_bare_or_cut_at_the_length_limit_leaks_nothing(raw_server, monkeypatch):
    monkeypatch.setenv("EVALKIT_TEST_KEY", KEY)
    basic = base64.b64encode(f"user:{PASSWORD}".encode()).decode()
    replies = {
        "bare 503": (503, json.dumps({"error": f"credential {KEY} is over quota"}).encode()),
        "cut 503": (503, b"E" * 287 + KEY.encode()),  # the 300-character cut falls inside the key
        "cut 401": (401, b"E" * 290 + KEY.encode()),
        "cut non-JSON 200": (200, b"<" * 190 + KEY.encode()),
    }
    for name, (status, body) in replies.items():
        url = raw_server(lambda c, status=status, body=body: c.reply(status, body))
        model = OpenAICompatibleBackend("m", url, api_key_env="EVALKIT_TEST_KEY", backoff_s=0.0, max_retries=1)
        with pytest.raises(BackendError) as failure:
            model.generate(PROMPT)
        assert "***" in str(failure.value), name
        assert_no_secret(error_texts(failure.value), KEY)
    # Basic credentials from the URL, echoed as their header value without the "Basic" prefix.
    url = raw_server(lambda c: c.reply(503, {"echo": c.headers.get("authorization", "").split()[-1]}))
    model = OpenAICompatibleBackend("m", url.replace("http://", f"http://user:{PASSWORD}@"), api_key_env=None,
                                    backoff_s=0.0, max_retries=0)
    with pytest.raises(BackendError) as failure:
        model.generate(PROMPT)
    assert_no_secret(error_texts(failure.value), PASSWORD, basic)


def test_query_tokens_reach_the_server_but_no_name_cache_row_or_stats(raw_server, tmp_path, capsys):
    from evalkit.cli.commands import main

    seen = []

    def answer(c):
        seen.append(c.request_line)
        c.reply(200, ok_body()) if c.count == 1 else c.reply(503, {"error": f"bad sig {SIG} code {CODE}"})

    url = raw_server(answer) + f"?sig={SIG}&code={CODE}&{BARE}"
    model = OpenAICompatibleBackend("m", url, api_key_env=None, backoff_s=0.0, max_retries=0)
    assert model.name.startswith(f"openai:{url.split('?')[0]}?sig=***&code=***&***#") and model.name.endswith(":m")
    other = OpenAICompatibleBackend("m", url.replace(SIG, SIG[::-1]), api_key_env=None)
    assert other.name != model.name  # masked alike, but another query: never one cache entry for both
    assert_no_secret(model.name + model.endpoint + repr(model) + repr(CachedBackend(model)))
    cache = CallCache(tmp_path / "calls.sqlite")
    assert CachedBackend(model, cache).generate(PROMPT)[0].texts == ["Fine."]
    assert f"?sig={SIG}&code={CODE}&{BARE}" in seen[0]  # masked in every output, sent as it is
    with pytest.raises(BackendError) as failure:
        CachedBackend(model, cache).generate([[{"role": "user", "content": "other"}]])
    assert_no_secret(error_texts(failure.value))
    cache.close()
    assert main(["cache", "stats", "--path", str(tmp_path / "calls.sqlite")]) == 0
    assert_no_secret(capsys.readouterr().out)
    for path in tmp_path.iterdir():
        assert_no_secret(path.read_bytes().decode("latin1"))


def test_a_url_password_and_an_api_key_are_refused_together_never_silently_swapped(raw_server, monkeypatch):
    seen = []

    def answer(c):
        seen.append(c.headers.get("authorization"))
        c.reply(200, ok_body())

    url = raw_server(answer).replace("http://", f"http://user:{PASSWORD}@")
    monkeypatch.setenv("EVALKIT_TEST_KEY", KEY)
    with pytest.raises(BackendConfigError, match=r"carries credentials .*EVALKIT_TEST_KEY holds an API key") as failure:
        OpenAICompatibleBackend("m", url, api_key_env="EVALKIT_TEST_KEY")
    assert_no_secret(error_texts(failure.value), KEY, PASSWORD)
    monkeypatch.delenv("EVALKIT_TEST_KEY")
    model = OpenAICompatibleBackend("m", url, api_key_env="EVALKIT_TEST_KEY", max_retries=0)
    assert model.generate(PROMPT)[0].texts == ["Fine."]
    assert seen == ["Basic " + base64.b64encode(f"user:{PASSWORD}".encode()).decode()]
    monkeypatch.setenv("EVALKIT_TEST_KEY", KEY)  # set after the backend was built: refused at the call
    with pytest.raises(BackendConfigError) as failure:
        model.generate(PROMPT)
    assert len(seen) == 1 and failure.value.__context__ is None
    assert_no_secret(error_texts(failure.value), KEY, PASSWORD)
    keyed = OpenAICompatibleBackend("m", url.replace(f"user:{PASSWORD}@", ""), api_key_env="EVALKIT_TEST_KEY")
    assert keyed.generate(PROMPT)[0].texts == ["Fine."] and seen[-1] == f"Bearer {KEY}"


# --------------------------------------------------------------------------- the user-proxy run store

class _Fixed:
    """A backend that answers every prompt alike."""

    name = "fixed:test"

    def label_probs(self, prompts, labels):
        from evalkit.models import LabelResult

        return [LabelResult({label: 1 / len(labels) for label in labels}, labels[0], "logprobs", 1.0)
                for _ in prompts]

    def generate(self, prompts, *, max_tokens=128, temperature=0.0, n=1, seed=0):
        from evalkit.models import GenerationResult

        return [GenerationResult(["could you tell me about trains please"] * n) for _ in prompts]


class _Leaky(_Fixed):
    """A backend whose library fails with the credentials in its message (as requests' InvalidURL does)."""

    def __init__(self, url: str):
        self.url = url

    def label_probs(self, prompts, labels):
        raise RuntimeError(f"Failed to parse: {self.url} with key {KEY} (sig {SIG})")


def test_errors_stored_in_the_run_store_are_redacted(tmp_path, monkeypatch):
    from evalkit.userproxy import job
    from evalkit.userproxy.runstore import RunStore

    conversation = {"dataset": "tiny", "conversation_id": "c", "task_description": "A person who wants trains.",
                    "turns": [{"role": "user", "content": "tell me about trains"},
                              {"role": "assistant", "content": "Trains run on rails."}], "metadata": {}}
    (tmp_path / "tiny_mirror.jsonl").write_text("".join(
        json.dumps({**conversation, "conversation_id": f"c{i}"}) + "\n" for i in range(4)))
    url = f"http://user:{PASSWORD}@127.0.0.1:8/v1?sig={SIG}"
    config = job.JobConfig.from_dict({
        "name": "t", "datasets": ["tiny_mirror.jsonl"], "episodes": 2, "seeds": [1], "tokenizer": "words",
        "proxies": {"p": {"model": "one"}}, "metrics": ["gteval"], "bootstrap": 0, "min_tokens": 1,
        "judges": {"j": {"kind": "openai", "model": "m", "base_url": url,
                         "options": {"api_key_env": "EVALKIT_TEST_KEY"}}}}, base_dir=tmp_path)
    # The key is set after the plan: with it set, the plan refuses URL credentials beside a key (one
    # Authorization header); here both must be present at run time so that both are secrets to mask.
    monkeypatch.setenv("EVALKIT_TEST_KEY", KEY)
    cache = CallCache(tmp_path / "calls.sqlite")
    outcome = job.execute(config, open_model=lambda spec: CachedBackend(
        _Leaky(spec.base_url) if spec.kind == "openai" else _Fixed(), cache))
    assert outcome.failed and all("RuntimeError" in text for text in outcome.failed.values())
    assert_no_secret(json.dumps(outcome.failed))
    store = RunStore(config.store)
    errors = store.units(config.run_id())["error"].dropna().tolist()
    assert errors and all("Failed to parse" in text for text in errors)
    assert_no_secret("\n".join(errors))
    store.fail_unit(job.plan(config)[0], f"direct: {url}", 0.0)  # the store masks what it is handed, too
    store.close()
    with sqlite3.connect(config.store) as connection:
        dump = "\n".join(connection.iterdump())
    assert "direct: http://***@127.0.0.1:8/v1?sig=***" in dump
    assert_no_secret(dump)


def test_a_key_echoed_in_a_reply_and_urllib3s_debug_log_are_masked(raw_server, tmp_path, monkeypatch, caplog):
    """A server echoing the key inside a 200 reply put it into the cache, and
    urllib3's DEBUG request line carried the query values."""
    import logging

    monkeypatch.setenv("EVALKIT_TEST_KEY", KEY)
    url = raw_server(lambda c: c.reply(200, ok_body(f"your key is {KEY}, all fine"))) + f"?sig={SIG}"
    model = OpenAICompatibleBackend("m", url, api_key_env="EVALKIT_TEST_KEY", backoff_s=0.0, max_retries=0)
    cache = CallCache(tmp_path / "calls.sqlite")
    with caplog.at_level(logging.DEBUG, logger="urllib3.connectionpool"):
        (result,) = CachedBackend(model, cache).generate(PROMPT)
    assert result.texts == ["your key is ***, all fine"]
    assert caplog.records and SIG not in caplog.text  # the request line was logged, masked
    cache.close()
    stored = (tmp_path / "calls.sqlite").read_bytes()
    assert KEY.encode() not in stored and SIG.encode() not in stored


@pytest.mark.parametrize("typo", ["userABC987x:PWsecretXYZ123456@127.0.0.1:18765/v1?key=QKEYvalue55555",
                                  "http:/userABC987x:PWsecretXYZ123456@127.0.0.1/v1"])
def test_user_info_without_a_well_formed_scheme_is_masked(typo):
    """Found by a re-probe: a URL typed without its scheme (or with 'http:/') kept its password in messages."""
    masked = redact(f"base_url {typo!r} cannot be used")
    assert "userABC987x" not in masked and "PWsecretXYZ123456" not in masked and "QKEYvalue55555" not in masked


def test_an_ordinary_word_a_secret_contains_stays_readable_but_pieces_of_it_do_not():
    # The probe's OPENAI_API_KEY held the word OPENAI: every "OPENAI" (the variable's own name among them) was
    # masked, as was "Bearer" in "Authorization: Bearer" when a token read "BearerTok-...".
    key, token = "sk-probe-OPENAI-SECRET-111", "BearerOpt-q1r2s3"
    assert redact("env/OPENAI_API_KEY OPENAI_APIKEY", [key]) == "env/OPENAI_API_KEY OPENAI_APIKEY"
    assert redact("Authorization: Bearer ***", [token]) == "Authorization: Bearer ***"
    for cut in (key[:9], key[:15], key[3:15], key[-10:], token[:10], "-OPENAI-", "OPENAI-SECRET"):
        assert cut not in redact(f"echo: {cut}!", [key, token]), cut
    assert redact(f"key {key} token {token}", [key, token]) == "key *** token ***"


def test_environment_variables_named_pat_jwt_creds_or_pass_are_credentials():
    from evalkit.models.redaction import environment_secrets, secret_variable

    named = ["GH_PAT", "PGPASS", "PGPASSWORD", "CI_JOB_JWT", "CI_JOB_JWT_V2", "MY_SERVICE_CREDS", "GITLAB_PAT_TOKEN"]
    assert [n for n in named if not secret_variable(n)] == []
    ordinary = ["PATH", "PGPASSFILE", "GIT_ASKPASS", "SSH_ASKPASS", "PATTERN", "CREDS_DIR", "BYPASS_CACHE"]
    assert [n for n in ordinary if secret_variable(n)] == []
    assert environment_secrets({"GH_PAT": "ghpat-0123", "PGPASS": "pgpass-0456", "PATH": "/usr/bin:/bin"}) == \
        ["ghpat-0123", "pgpass-0456"]


PATH_KEY = "bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALD"


def test_a_key_in_the_url_path_is_masked_in_names_replies_the_cache_and_cards(raw_server, tmp_path):
    """A service that takes its key in the path (a Telegram bot's ``/bot<id>:<token>/``): the request goes to
    it as written; the backend's name, a reply echoing it, the call cache and a judge card's record mask it;
    another key in the same place keeps another cache."""
    from evalkit.judgecard.spec import public_record

    seen = []

    def answer(c):
        seen.append(c.request_line)
        c.reply(200, ok_body(f"you called /{PATH_KEY}/v1, fine"))

    url = raw_server(answer).replace("/v1", f"/{PATH_KEY}/v1")
    model = OpenAICompatibleBackend("m", url, api_key_env=None, backoff_s=0.0, max_retries=0)
    other = OpenAICompatibleBackend("m", url.replace("AAHdq", "ZZHdq"), api_key_env=None)
    assert other.name != model.name and "/***/v1#" in model.name
    cache = CallCache(tmp_path / "calls.sqlite")
    (result,) = CachedBackend(model, cache).generate(PROMPT)
    cache.close()
    assert PATH_KEY in seen[0] and result.texts == ["you called /***/v1, fine"]
    record = public_record({"kind": "lm", "base_url": url, "name": f"mine at {url}"})
    stored = (tmp_path / "calls.sqlite").read_bytes().decode("latin1")
    for text in (model.name, model.endpoint, repr(model), json.dumps(record), stored):
        assert "AAHdqTcvCH1vGWJxfSeofSAs0K5PALD" not in text, text
    # A model's name in the path stays readable.
    named = OpenAICompatibleBackend("m", url.replace(PATH_KEY, "Meta-Llama-3.1-8B-Instruct"), api_key_env=None)
    assert "Meta-Llama-3.1-8B-Instruct" in named.name


@pytest.mark.parametrize("text, secret", [
    ('password="Hunter2xQ9"', "Hunter2xQ9"),            # a quoted value after "="
    ("api_key='abc123XYZ789'", "abc123XYZ789"),
    (':password => "Hunter2xQ9"', "Hunter2xQ9"),          # Ruby's hash arrow
    ("connect postgres://app:pa/ss9word@db/app failed", "pa/ss9word"),  # an unencoded "/" in a URL password
    ("connect http://alice:p@ss/w%rd-K7Mq@127.0.0.1:8000/v1 failed", "ss/w%rd-K7Mq"),  # and an "@" before it
])
def test_redact_masks_quoted_arrowed_and_slashed_credentials(text, secret):
    from evalkit.models import redact

    masked = redact(text)
    assert secret not in masked and "***" in masked, masked


def test_a_slashed_url_password_in_the_environment_is_a_secret_and_ordinary_at_urls_stay_readable():
    from evalkit.models import redact
    from evalkit.models.redaction import environment_secrets

    assert "pa/ss9word" in environment_secrets({"DATABASE_URL": "postgres://app:pa/ss9word@db/app"})
    from evalkit.models.redaction import endpoint_label, url_credentials

    at_and_slash = "http://alice:p@ss/w%rd-K7Mq@127.0.0.1:8000/v1"  # a password holding "@" and "/", unencoded
    assert url_credentials(at_and_slash) == ("alice", "p@ss/w%rd-K7Mq")
    assert endpoint_label(at_and_slash) == "127.0.0.1:8000/v1"
    readable = "see https://medium.com/@alice and https://h:8080/u/@me"
    assert redact(readable) == readable


def test_a_model_named_by_a_credential_from_the_environment_is_masked_in_names_and_run_records(monkeypatch):
    """A key pasted as the model's name (MODEL=$MYCORP_API_KEY by mistake) stays out of the call cache's name
    and the user-proxy run's stored settings; two such models keep apart."""
    from evalkit.models.openai_compatible import OpenAICompatibleBackend
    from evalkit.userproxy.config import _masked

    key, other = "mc-k3y0123456789abc", "mc-k3y9876543210xyz"
    monkeypatch.setenv("MYCORP_API_KEY", key)
    monkeypatch.setenv("MYCORP_OTHER_TOKEN", other)
    first = OpenAICompatibleBackend(key, "http://127.0.0.1:9/v1", api_key_env=None)
    second = OpenAICompatibleBackend(other, "http://127.0.0.1:9/v1", api_key_env=None)
    assert key not in first.name and other not in second.name and first.name != second.name
    plain = OpenAICompatibleBackend("SmolLM2-135M-Instruct", "http://127.0.0.1:9/v1", api_key_env=None)
    assert plain.name == "openai:http://127.0.0.1:9/v1:SmolLM2-135M-Instruct"
    stored = _masked({"roles": {"proxy": {"model": key, "base_url": "http://u:pw@h/v1"}}, "note": f"used {key}"})
    assert key not in json.dumps(stored) and stored["roles"]["proxy"]["base_url"] == "http://***@h/v1"


@pytest.mark.parametrize("url, secret", [
    ("https://h/v1/token/abcdefgh12", "abcdefgh12"),                       # after a segment naming it
    ("https://h/hooks/T0ABCDEF/B0ABCDEF/x9Y8z7w6v5u4t3", "x9Y8z7w6v5u4t3"),  # a Slack webhook's secret
    ("https://h/v1/Zq8XwV3kLm9P", "Zq8XwV3kLm9P"),                          # 12 characters of mixed kinds
    ("https://h/v1/Bearer%20HDRsecret12345", "HDRsecret12345"),             # a Bearer token as a segment
    ("https://h/v1%3Fapi_key%3DENCk3y123456", "ENCk3y123456"),              # an encoded query in the path
    ("https://h/v1/token/tok.en.12345678", "tok.en.12345678"),              # a dotted value after its name
    ("https://h/v1/token/AbCdEfGhIjKlMnOp", "AbCdEfGhIjKlMnOp"),            # letters alone, mixed case
    ("https://h/v1/x-api-key/abcdefgh14", "abcdefgh14"),                    # a compound name before it
    ("https://h/v1/Bearer+hdrsecretvalue99", "hdrsecretvalue99"),           # "+" for the space
    ("https://h/v1%3Fcode%3DENCk3y123457", "ENCk3y123457"),                 # any encoded query value
    ("https://h/v1%23ENCfrag12345678", "ENCfrag12345678"),                  # an encoded fragment
    ("https://h/v1%253Fapi_key%253DDBLk3y123456", "DBLk3y123456"),          # encoded twice
])
def test_keys_in_a_url_path_are_kept_out_of_the_endpoint_a_record_shows(url, secret):
    from evalkit.models.redaction import endpoint_label, public_endpoint

    assert secret not in public_endpoint(url) and secret not in endpoint_label(url)
    assert "***" in endpoint_label(url) and endpoint_label(url).startswith("h/")


@pytest.mark.parametrize("url, rest", [("http://alice:p@ss/w0rd-K7Mq@vllm/v1", "w0rd-K7Mq"),
                                       ("postgres://app:p@ss/LITpg403Z@db/app", "LITpg403Z")])
def test_a_password_with_at_and_slash_before_a_one_word_host_is_masked_whole(url, rest):
    """The host a service runs on is often one word (vllm, db): the password before it is masked whole."""
    from evalkit.models import redact
    from evalkit.models.redaction import url_credentials

    assert rest not in redact(f"connect {url} failed") and "***@" in redact(url)
    assert url_credentials(url)[1].endswith(rest)


def test_an_endpoint_whose_host_cannot_be_told_from_its_password_is_refused():
    """A parser reads http://alice:p@ss/w0rd@vllm/v1 as host "ss": the backend would send part of the password
    there. It is refused, naming the fix, with no piece of the password in the message."""
    with pytest.raises(BackendConfigError, match="percent-encode") as refused:
        OpenAICompatibleBackend("m", "http://alice:p@ss/w0rd-K7Mq@vllm/v1", api_key_env=None)
    assert "w0rd-K7Mq" not in str(refused.value) and "p@ss" not in str(refused.value)


STAGED_KEY = "0f3c9a7e5b1d48e2a6c4f8b0d2e7a913"  # a 32-hex key: no shape of its own gives it away


@pytest.mark.parametrize("name", ["OPENAI_API_KEY_PROD", "OPENAI_API_KEY_TEST", "GEMINI_API_KEY_STAGING",
                                  "ANTHROPIC_API_KEY_WORK", "AZURE_OPENAI_KEY_LIVE", "OPENAI_KEY_DEV",
                                  "API_KEY_PERSONAL", "OPENAI_API_KEY_LOCAL", "OPENAI_API_KEY1", "KEY_OPENAI",
                                  "OPENAI-API-KEY", "VLLM_CRED", "AZURE_STORAGE_SAS", "JUDGE_SAS", "MYSQL_PWD_PROD",
                                  "STRIPE_SK_LIVE", "OpenAiApiKeyProd"])
def test_a_key_variable_named_with_a_stage_a_number_or_in_another_order_is_a_credential(name):
    from evalkit.models.redaction import environment_secrets, secret_variable

    assert secret_variable(name)
    assert environment_secrets({name: STAGED_KEY, "HOME": "/home/me"}) == [STAGED_KEY]
    assert STAGED_KEY not in redact(f"auth failed for {STAGED_KEY}", environment_secrets({name: STAGED_KEY}))


def test_names_that_say_where_or_what_of_a_key_stay_no_credential():
    from evalkit.models.redaction import secret_variable

    ordinary = ["AWS_ACCESS_KEY_ID", "KEY_ID_PROD", "SSH_KEY_TYPE", "API_KEY_HEADER", "OPENAI_API_KEY_FILE",
                "KEY_VAULT_NAME", "PRIMARY_KEY_COLUMN", "SAS_HOME", "XDG_SESSION_TYPE", "KEYBOARD_LAYOUT",
                "TOKENIZERS_PARALLELISM", "PASSWORD_STORE_DIR", "PYTEST_ADDOPTS", "HF_HOME", "TEST", "PWD"]
    assert [n for n in ordinary if secret_variable(n)] == []


DISCORD_TOKEN = "Ab3_hellothereXyZ9-QwErTy12_abcdefgUVW45xyz-LMNOP67qrs_tuvWX89yZ0aB"  # a seven-letter lower-case run


@pytest.mark.parametrize("url, secret", [
    (f"https://discord.com/api/webhooks/123456789012345678/{DISCORD_TOKEN}", DISCORD_TOKEN),
    (f"https://discord.com/api/webhooks/123456789012345678/{DISCORD_TOKEN}/slack", DISCORD_TOKEN),
    ("https://gw.example.com/v1/bearer/zq8xwv3klm9pqr2st4uv123/chat", "zq8xwv3klm9pqr2st4uv123"),
    ("https://gw.example.com/authorization/abcdef123456/v1", "abcdef123456"),
    ("https://gw.example.com/session/a1b2c3d4e5f6g7/v1", "a1b2c3d4e5f6g7"),
    ("https://gw.example.com/key:zq8xwv3klm9pqr2st4uv9/v1", "zq8xwv3klm9pqr2st4uv9"),
    ("https://gw.example.com/apikey-zq8xwv3klm9pqr2st4uv9/v1", "zq8xwv3klm9pqr2st4uv9"),
    ("https://hooks.zapier.com/hooks/catch/1234567/abcde12/", "abcde12"),
])
def test_a_key_after_a_bearer_session_or_webhook_segment_is_kept_out_of_the_endpoint(url, secret):
    from evalkit.models.redaction import path_secrets, public_endpoint

    assert secret in path_secrets(url)
    shown = public_endpoint(url)
    assert secret not in shown, shown
    assert shown.startswith("https://") and "/v1" in shown or "hooks" in shown or "webhooks" in shown, shown


def test_routes_named_like_credentials_stay_readable():
    from evalkit.models.redaction import path_secrets

    for url in ("https://h/v1/token/refresh", "https://h/v1/session/new", "https://h/api/key-value/v1",
                "https://h/v1/token-refresh", "https://h/models/Qwen2-7B-Instruct/v1/chat/completions"):
        assert path_secrets(url) == [], url


def test_a_token_given_as_the_urls_user_with_a_dummy_password_is_a_configured_secret():
    from evalkit.models.redaction import configured_secrets

    token = "Qm7Rt2Vx9Lp4Kd8Wn3Hs"
    secrets = configured_secrets(f"https://{token}:x-oauth-basic@judge.example.com/v1")
    assert token in secrets
    assert redact(f"401 Unauthorized: unknown user {token}", secrets) == "401 Unauthorized: unknown user ***"
    assert redact(f"quota of {token[:12]}... spent", secrets) == "quota of ***... spent"
    # a user name that is one ordinary word stays readable where the text names it for another reason
    plain = configured_secrets("https://admin:Hh7Kk2Ll9Mm@judge.example.com/v1")
    assert "admin" not in plain and redact("the admin page", plain) == "the admin page"


def test_redaction_of_a_long_adversarial_text_is_linear_and_right():
    # Each run below made a scan from every one of its starts to its far end (quadratic): 200 KB took minutes.
    runs = ["a." * 15_000, ",a:" * 10_000, "sk-" * 10_000, "x://u:@" * 4_000, "x://u:p@/" * 3_000, "***=" * 7_000,
            "eyJ-" * 7_000, "a-" * 15_000]
    secrets = ["https://me:Hunter2pw9@db.example.com/v1", "postgres://app:pa/ss9@db/app", "u:pa,ss:w0rd@db:5432",
               "https://h/v1?api_key=QKEYvalue5555#fr4gment"]
    text = " ".join(run + " " + secret for run, secret in zip(runs, secrets * 2))
    assert len(text) > 200_000
    masked = redact(text)
    for leaked in ("Hunter2pw9", "pa/ss9", "pa,ss:w0rd", "QKEYvalue5555", "fr4gment"):
        assert leaked not in masked, leaked
    for run in ("a." * 15_000, ",a:" * 10_000, "a-" * 15_000, "eyJ-" * 7_000):
        assert run in masked
    for secret in secrets:  # each masked as it is when it stands alone
        assert f" {redact(secret)} " in masked or masked.endswith(f" {redact(secret)}"), redact(secret)
    assert "https://***@db.example.com/v1" in masked and "postgres://***@db/app" in masked


def test_a_token_in_the_user_slot_of_a_url_in_any_environment_variable_is_a_secret(monkeypatch):
    from evalkit.models import redact
    from evalkit.models.redaction import environment_secrets, public_endpoint

    token = "Zq8XwV3mT7pL2kR9"
    environ = {"GIT_REMOTE": f"https://{token}:x-oauth-basic@git.example.com/org/repo",
               "MIRROR": f"https://{token[::-1]}@mirror.example.com/", "DEPLOY": "ssh://deploy@host/srv",
               "NOTE": "mail alice@example.com"}
    found = environment_secrets(environ)
    assert token in found and token[::-1] in found and "deploy" not in found, found
    text = f"cloned with {token}; mirror {token[::-1][:8]}"
    assert token not in redact(text, found) and token[::-1][:8] not in redact(text, found)
    # what a card keeps of an endpoint masks the environment's user-slot token where a spec copied it
    monkeypatch.setenv("GIT_REMOTE", environ["GIT_REMOTE"])
    assert token not in public_endpoint(f"http://127.0.0.1:8000/v1/{token}/chat")


def test_credential_headers_fields_and_variables_a_probe_found_are_masked():
    """An Authorization header with a scheme other than Bearer/Basic kept its
    token; token, cookie and subscription-key fields were not masked; some credential variables' names were not
    read as such; a token in an environment URL's query or path was masked only there."""
    from evalkit.models.redaction import environment_secrets, secret_variable

    token = "Zq8XwV3kLm9PqR7tYu2B"
    for text in (f"Authorization: Token {token}", f'{{"authorization": "ApiKey {token}"}}',
                 f"Proxy-Authorization: SSWS {token}", f"Authorization: Bot {token}", f"X-Auth-Token: {token}",
                 f"PRIVATE-TOKEN: {token}", f"Ocp-Apim-Subscription-Key: {token}", f"token: {token}",
                 f'{{"token": "{token}"}}', f'{{"auth_token": "{token}"}}', f'{{"private_key": "{token}"}}',
                 f'{{"apiToken": "{token}"}}', f"Cookie: sessionid={token}; theme=dark", f"Set-Cookie: s={token}"):
        assert token not in redact(text) and "***" in redact(text), text
    usage = '{"completion_tokens": 5, "prompt_tokens": 7, "max_tokens": 9}'
    assert redact(usage) == usage and redact(f"Authorization: Bearer {token}") == "Authorization: Bearer ***"
    named = ["OPENAI_KEY_LIST", "OPENAI_API_KEY_HEADER_VALUE", "OPENAIAPIKEYPROD", "OPENAI_KEYPAIR", "TOTP_SEED",
             "HMAC_SALT", "PW", "SERVICE_ACCOUNT_JSON"]
    assert [name for name in named if not secret_variable(name)] == []
    assert [name for name in ("RANDOM_SEED", "PYTHONHASHSEED", "SALT_MASTER") if secret_variable(name)] == []
    found = environment_secrets({"UPSTREAM_URL": f"https://h/v1?api-key={token}",
                                 "KEYED": f"https://h/key/{token[::-1]}/v1",
                                 "PIP_INDEX_URL": "https://pypi.org/simple"})
    assert found == [token, token[::-1]]
    assert token[:9] not in redact(f"model {token[:9]}", found)
    from evalkit.models.redaction import endpoint_label, public_endpoint

    lower = "zq8xwv3klm9pqr7tyu2b1234"  # a word-free lower-case token as a path segment
    assert lower not in public_endpoint(f"https://h.example/{lower}/v1") and lower not in endpoint_label(
        f"https://h.example/{lower}/v1")
    assert public_endpoint("https://h.example/mistral7binstructv02/v1") == "https://h.example/mistral7binstructv02/v1"


def test_a_secret_written_base64_encoded_in_another_case_or_unicode_escaped_is_masked():
    """A key an endpoint or a program writes base64-encoded, lower- or upper-cased or as JSON's \\u escapes is
    masked, as its bare, %-quoted and JSON forms are."""
    from evalkit.models.redaction import mask_echoes

    key = "Qx7envKEY-0a1b2c3d"
    forms = [base64.b64encode(key.encode()).decode(), base64.b64encode(key.encode()).decode().rstrip("="),
             base64.urlsafe_b64encode(key.encode()).decode(), key.lower(), key.upper(),
             "".join(f"\\u{ord(c):04x}" for c in key)]
    for form in forms:
        assert form not in redact(f"echo {form} done", [key]), form
        assert form not in mask_echoes(f"echo {form} done", [key]), form
    # a whole secret in another case, however short and word-like; a word that is only a piece of one stays
    assert redact("a short pw: abcdefgh", ["ABCDEFGH"]) == "a short pw: ***"
    assert redact("the OPENAI_API_KEY variable", ["sk-probe-OPENAI-1"]) == "the OPENAI_API_KEY variable"


def test_fused_names_session_ids_connection_strings_and_fully_escaped_keys_are_masked():
    """Fused TOKEN names, session ids, a passcode; an Azure connection
    string's AccountKey, a second URL in pip's list, a JSON header in an ordinary variable; a key fully
    percent-encoded or \\u-escaped in upper-case hex; path keys after "auth_"/"key_"/"tok_"; single-quoted
    dicts, more JSON and header names, and --token options in free text."""
    from evalkit.models.redaction import endpoint_label, environment_secrets, secret_variable

    token = "Zq8XwV3kLm9PqR7t"
    names = ["GITHUBTOKEN", "HFTOKEN", "SLACK_BOTTOKEN", "OPENAI_APITOKEN", "SESSION_ID", "SESSIONID", "DB_PASSCODE"]
    assert [name for name in names if not secret_variable(name)] == []
    assert not secret_variable("XDG_SESSION_TYPE") and not secret_variable("TOKENIZERS_PARALLELISM")
    found = environment_secrets({
        "AZURE_STORAGE": f"DefaultEndpointsProtocol=https;AccountName=me;AccountKey={token}==;EndpointSuffix=x",
        "PIP_EXTRA_INDEX_URL": "https://u:p1secret@a.example/simple https://u2:p2secret@b.example/simple",
        "HEADERS": f'{{"Authorization": "Bearer {token[::-1]}"}}', "JAVA_OPTS": "-Dpassword=hunter2xx -Xmx1g"})
    assert found == [f"{token}==", "p1secret", "p2secret", token[::-1], "hunter2xx"], found
    for form in ("".join(f"%{b:02X}" for b in token.encode()), "".join(f"\\u{ord(c):04X}" for c in token)):
        assert form not in redact(f"echo {form}", [token]), form
    for segment in (f"auth_{token}", f"key_{token}", f"tok_{token.lower()}"):
        assert segment[-10:] not in endpoint_label(f"https://h.example/v1/{segment}/chat"), segment
    for text in (f"{{'api_key': '{token}'}}", f'{{"aws_secret_access_key": "{token}"}}',
                 f'{{"sessionToken": "{token}"}}', f'{{"id_token": "{token}"}}', f'{{"secretKey": "{token}"}}', f"X-Vault-Token: {token}",
                 f"X-Amz-Security-Token: {token}", f"run --api-key {token} now", f"--token {token}"):
        assert token not in redact(text), text
    assert redact("the --token-file path") == "the --token-file path"


def test_unlabelled_aws_secret_slack_webhook_and_telegram_token_in_free_text_are_masked():
    """In free text (not a configured URL) each of these loses its secret part."""
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    assert aws not in redact(f"creds AKIAIOSFODNN7EXAMPLE {aws} ok")
    slack = "Xq7LmW2pZk9RtY4vN8cJ3hAa"
    assert slack not in redact(f"post to https://hooks.slack.com/services/T0AAA1111/B0BBB2222/{slack} failed")
    bot = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    assert bot not in redact(f"GET https://api.telegram.org/bot123456789:{bot}/getMe -> 401")


def test_credentials_in_command_lines_and_behind_escapes_are_masked_in_free_text():
    """Passwords on quoted command lines, credential names written escaped, values
    \\u-escaped or split by a backslash-newline, and configured secrets written so."""
    for text, value in [("ran: mysql -u root -pS3cr3tPass! -h db", "S3cr3tPass!"),
                        ("mysqldump -u app -p'dumpPw-7788' shop", "dumpPw-7788"),
                        ("sshpass -p 'hunter2xyz' ssh build@ci", "hunter2xyz"),
                        ("curl -u alice:Pa55w0rd-xyz https://h/", "Pa55w0rd-xyz"),
                        ("curl --user 'bob:topsecret99' https://h", "topsecret99"),
                        ("sent api_key&#61;abcdef1234567 to h", "abcdef1234567"),
                        ("sent api%5Fkey%3Dabcdef1234567 to h", "abcdef1234567"),
                        ("header token=abcd\\\nefgh12345 next", "efgh12345")]:
        assert value not in redact(text), text
    escaped = "".join(f"\\u{ord(c):04x}" for c in "sk-proj0123456789abcd")
    assert redact(f'{{"k": "{escaped}"}}') == '{"k": "***"}'
    assert "3456789" not in redact(f'{{"k": "{escaped[:40].upper()}{escaped[40:]}"}}')  # hex digits in either case
    secret = "S3cretPassw0rd99XYZ"
    assert redact(f"error: key {secret[:16]}\\\n{secret[16:]} rest", [secret]) == "error: key *** rest"
    assert redact("echo \\u0053\\u0033" + secret[2:], [secret]) == "echo ***"
    assert redact("mysql -h db -u root -p shop; grep -p x f; 50% of 100%20items") == \
        "mysql -h db -u root -p shop; grep -p x f; 50% of 100%20items"  # a prompt for the password; no credential


def test_abbreviated_names_option_strings_and_base64_or_hex_forms_are_masked():
    """Abbreviated and non-English credential names; a URL password with a comma, an option string, a name and
    value without a space, a nested JSON field and a netrc line in ordinary variables; a secret inside a longer
    base64 text at any alignment (a Basic value for any user), and in hex."""
    from evalkit.models.redaction import environment_secrets, secret_variable

    names = ["DB_PSWD", "SMTP_PASSWORT", "MAIL_KENNWORT", "DB_CONTRASENA", "BANCO_SENHA", "GH_TKN", "HF_TOK",
             "API_CLAVE"]
    assert [name for name in names if not secret_variable(name)] == []
    assert not secret_variable("HF_TOKENIZER") and not secret_variable("TOKYO_REGION")
    key = "Zq8XwV3kLm9PqR7tUv"
    found = environment_secrets({"DATABASE_URL": f"postgres://app:Ab,{key}@db/app", "VLLM_ARGS": f"--api-key {key}1",
                                 "JUDGE_HEADERS": f"api-key:{key}2", "CFG": f'{{"auth": {{"value": "{key}3"}}}}',
                                 "NETRC": f"machine h login u password {key}4", "PYTEST_LIKE": "a_secrets.py::test_x",
                                 "PATH": "/usr/bin:/bin"})
    assert found == [f"Ab,{key}", f"{key}1", f"{key}2", f"{key}3", f"{key}4"], found
    for user in ("AWS", "_json_key", "bob", "x", "ab", "Bearer"):
        encoded = base64.b64encode(f"{user}:{key}".encode()).decode()
        assert key[2:-2] not in base64.b64decode(redact(f"auth {encoded}", [key])[5:].replace("***", "") + "==="
                                                 ).decode("latin-1"), user
    assert key.encode().hex() not in redact(f"hex {key.encode().hex()}", [key])


def test_escaped_json_fields_and_pem_keys_are_masked_and_masking_stays_linear():
    """JSON-escaped credential fields in an error body, PEM private keys, and long runs that made the redaction
    and the grid's output masking quadratic (a URL's user-info followed by many "p@", "key=" repeated, "x://u:p@/"
    repeated)."""
    from evalkit.grid.printed_secrets import output_secrets

    assert "Hunter2Hunter2" not in redact('{"error": {"message": "config={\\"password\\": \\"Hunter2Hunter2\\"}"}}')
    body = "MIIEowIBAAKCAQEAz8Kq3vLm"
    for pem in (f"-----BEGIN RSA PRIVATE KEY-----\n{body}\nabc\n-----END RSA PRIVATE KEY-----",
                f'{{"private_key": "-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n"}}'):
        assert body not in redact(pem), pem
    runs = ["http://u:" + "p@" * 50_000, "key=" * 25_000, "x://u:p@/" * 12_000, "A" * 100_000,
            "-----BEGIN PRIVATE KEY-----" * 4_000, "-----BEGIN RSA PRIVATE KEY-----\nabc\n" * 8_000]
    for run in runs:  # each took tens of seconds at this size when quadratic; the suite's length shows a relapse
        assert redact(run) is not None and output_secrets(run) is not None
    assert redact("postgres://me:p@ss/w0rd@db/app x") == "postgres://***@db/app x"


def test_an_endpoints_error_that_echoes_an_environment_secret_is_masked(monkeypatch):
    from evalkit.models.openai_compatible import OpenAICompatibleBackend

    monkeypatch.setenv("MY_SERVICE_PASSPHRASE", "tango-mango-fandango-9")
    backend = OpenAICompatibleBackend("m", "http://127.0.0.1:9/v1", api_key_env=None)
    assert "tango-mango-fandango-9" in backend._secrets()


@pytest.mark.parametrize("text, value", [
    ("redis-cli -h r -a 'R3disPw99' ping", "R3disPw99"), ("docker login -u me -p DockPw-771 reg.io", "DockPw-771"),
    ("docker login --password=DockPw-772 reg.io", "DockPw-772"), ("ldapsearch -x -D cn=a -w LdapPw-55 -b x", "LdapPw-55"),
    ("sqlcmd -S db -U sa -P 'SqlPw-123!'", "SqlPw-123!"), ("mongosh --host h -u admin -p MongoPw77", "MongoPw77"),
    ("unzip -P ZipPw-0099 a.zip", "ZipPw-0099"), ("7z x -pSevenZPw12 a.7z", "SevenZPw12"),
    ("smbclient //srv/share -U alice%SmbPw-444", "SmbPw-444"), ("openssl rsa -passin pass:SslPw-9876 -in k", "SslPw-9876"),
    ("htpasswd -bc .htpasswd alice HtPw-4321", "HtPw-4321"), ("htpasswd -nb alice HtPw-4322", "HtPw-4322"),
    ('Authorization: Digest username="u", nonce="n", response="6629fae49393a05397450978507c4ef1"', "6629fae49393"),
    ("key tvly-dev-AbCdEf1234567890xyz used", "AbCdEf1234567890"),
    ('<add key="OpenAIApiKey" value="Zq8XwV3kLm9P" />', "Zq8XwV3kLm9P"),
    ("<password>correct horse battery</password>", "horse"), ('<db_password a="x">hunter2hunter</db_password>', "hunter2"),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq ok", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq"),
    ("GET https://h/v1/token/Zq8XwV3kLm 401", "Zq8XwV3kLm"), ('password="correct horse battery staple"', "horse"),
    ("passphrase: correct horse battery staple", "horse"), ('{"password": "correct horse battery"}', "horse"),
    ("ｐａｓｓｗｏｒｄ＝Hunter2Wide9", "Hunter2Wide9"), ("p\u200ba\u200bs\u200bs\u200bw\u200bord=Hunter2Zw9", "Hunter2Zw9"),
    ("api%255Fkey%253DDoubleEnc99", "DoubleEnc99"),
])
def test_program_passwords_xml_settings_and_disguised_names_are_masked_in_free_text(text, value):
    """Passwords given to other programs' options, a Digest response, more key prefixes, XML settings, a bare
    Telegram token, a key after /token/ in a path, passwords with spaces, and names written in full-width
    letters, split by invisible characters or percent-encoded twice."""
    assert value not in redact(text)


def test_routes_prompts_and_counts_that_only_look_like_credentials_stay_readable():
    for text in ["GET /v1/token/refresh", "mongosh --host h -p", "psql --password -h db", "pass: 12, fail: 0",
                 "see https://h/docs/api-keys/overview", "the password is required", "max_tokens: 200"]:
        assert redact(text) == text


def test_a_short_environment_password_inside_base64_and_many_escaped_credentials_are_masked():
    """A 6-character password inside a Basic value at any alignment; 8,000 distinct escaped credentials in one
    text are each masked (one decoding pass: the time does not grow with their number times the length)."""
    for user in ("u", "ab", "bob", "alice"):
        encoded = base64.b64encode(f"{user}:Pw9x!q".encode()).decode()
        assert encoded not in redact(f"auth {encoded} sent", ["Pw9x!q"]), user
    text = " ".join(f"key%3D{i:05d}abcdefg" for i in range(8000))
    masked = redact(text)
    assert masked == " ".join(["key%3D***"] * 8000)


def test_a_secret_behind_rarer_escapes_invisible_marks_another_case_or_mime_lines_is_masked():
    """A configured secret interleaved with isolates, variation selectors
    or tag characters, escaped as ``\\u{..}``, ``\\U........``, ``%u....`` or octal, echoed cut and lower-cased,
    or base64-encoded and wrapped across MIME lines; a PGP private key block."""
    secret = "Zq8XwV3kLm9PqR7tUv"
    for mark in ("\u2066", "\ufe0f", "\U000e0041", "\u034f", "\x00"):
        assert "***" in redact("echo " + mark.join(secret) + " end", [secret]), repr(mark)
        assert "Lm9P" not in redact("echo " + mark.join(secret) + " end", [secret]), repr(mark)
    for escape in ("\\u{{{:x}}}", "\\U{:08x}", "%u{:04x}", "\\{:03o}"):
        written = "".join(escape.format(ord(c)) for c in secret)
        assert redact(f"echo {written} end", [secret]) == "echo *** end", escape
    assert secret[3:12].lower() not in redact(f"cut: {secret[3:12].lower()}", [secret])
    wrapped = base64.b64encode(f"user:{secret}".encode()).decode()
    assert "***" in redact(f"auth {wrapped[:10]}\n{wrapped[10:]}", [secret])
    body = "lQOYBGXz8k0BCADKq3vLm9PqR7t"
    pgp = f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----"
    assert body not in redact(pgp)


def test_an_environment_token_in_an_endpoints_path_a_deep_json_value_and_a_lone_surrogate_are_handled(monkeypatch):
    from evalkit.models.openai_compatible import OpenAICompatibleBackend
    from evalkit.models.redaction import environment_secrets

    monkeypatch.setenv("GATEWAY_TOKEN", "plainwordtoken")
    backend = OpenAICompatibleBackend("m", "http://127.0.0.1:9/gw/plainwordtoken/v1", api_key_env=None)
    assert "plainwordtoken" not in backend.name and "plainwordtoken" not in repr(backend)
    other = OpenAICompatibleBackend("m", "http://127.0.0.1:9/gw/otherwordtoken/v1", api_key_env=None)
    assert other.name != backend.name  # masked alike, still two caches
    assert environment_secrets({"CFG": "[" * 100_000 + "]" * 100_000}) == []
    lone = "ab\udcffcdefgh12"
    assert "cdefgh12" not in redact(f"x {lone} y", [lone])


@pytest.mark.parametrize("text, value", [
    ("sqlplus scott/TigerPw-77@db", "TigerPw-77"), ("gpg --batch --passphrase GpgPw-9911 -d f", "GpgPw-9911"),
    ("wget --http-password=WgetPw-123 https://h/f", "WgetPw-123"), ("curl --proxy-user me:ProxPw-42 https://h", "ProxPw-42"),
    ("az login -u me -p AzPw-4455", "AzPw-4455"), ("ipmitool -H h -U admin -P IpmiPw-66 power status", "IpmiPw-66"),
    ("psexec \\\\h -u admin -p PsPw-7788 cmd", "PsPw-7788"), ("vault login hvsX-AbCd1234", "hvsX-AbCd1234"),
    ("wandb login 0123456789abcdef0123", "0123456789abcdef0123"), ("net use \\\\srv\\s NetPw-3344 /user:me", "NetPw-3344"),
    ("ngrok config add-authtoken 2abCDef3456GhIj", "2abCDef3456GhIj"),
    ("aws configure set aws_secret_access_key AwsPw-5566x", "AwsPw-5566x"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\nAAAA (cut)", "b3BlbnNzaC1rZXktdjEA"),
    ("Private-Lines: 2\nAAAAgQCqGKukO1De7zhZj6+H0qtjTkVx\nAAAAQQDa", "AAAAgQCqGKukO1De7zhZj6"),
    ('{"kty": "RSA", "d": "X4cTteJY_gn4FYPsXB8rdXix5vwsg1FLN5E3EaG6RJo", "e": "AQAB"}', "X4cTteJY_gn4FYP"),
    ("key AGE-SECRET-KEY-1QQPQZZRSTUVWXYZ0123456789QQPQ", "QQPQZZRSTUVWXYZ"), ("GOCSPX-AbCdEf123456789xyz", "AbCdEf123456"),
    ("X-Auth-Key: 0123456789abcdef0123", "0123456789abcdef"), ("openai_key: Zq8XwV3kLm9PqR7t", "Zq8XwV3kLm9P"),
    ("sessionid=Zq8XwV3kLm9PqR7t; path=/", "Zq8XwV3kLm9P"), ("grant_type=authorization_code&code=4/0AbCdEfGh12345", "0AbCdEfGh12345"),
    ("influx -username admin -password Hunter2xyz77 -execute q", "Hunter2xyz77"),
    ("openssl enc -aes-256-cbc -k Hunter2xyz78 -in a", "Hunter2xyz78"), ("xfreerdp /v:h /u:admin /p:Hunter2xyz79", "Hunter2xyz79"),
    ("npm config set //registry.npmjs.org/:_authToken Zq8XwV3kLm9PqR7t", "Zq8XwV3kLm9P"),
    ("Using token Zq8XwV3kLm9PqR7tUv for upload", "Zq8XwV3kLm9P"),
])
def test_more_command_lines_key_files_prefixes_and_fields_are_masked(text, value):
    assert value not in redact(text)


def test_keys_printed_in_groups_as_byte_lists_utf16_base64_or_reversed_and_environment_forms_are_masked(monkeypatch):
    from evalkit.models.redaction import environment_secrets
    from evalkit.models.openai_compatible import OpenAICompatibleBackend

    key = "Zq8XwV3kLm9PqR7tUv"
    raw = key.encode()
    for written in ("Zq8X wV3k Lm9P qR7t Uv", "Zq8X-wV3k-Lm9P-qR7t-Uv", "<span>Zq8X</span><span>wV3k</span>Lm9PqR7tUv",
                    ",".join(map(str, raw)), ":".join(f"{b:02x}" for b in raw), ", ".join(f"0x{b:02x}" for b in raw),
                    ", ".join(f'"{c}"' for c in key), base64.b64encode(f"echo {key}".encode("utf-16-le")).decode(),
                    key[::-1], "correct+horse+battery+staple"):
        assert redact(f"out: {written} end", [key, "correct horse battery staple"]) != f"out: {written} end", written
    assert redact("𝐙𝐪𝟖𝐗𝐰𝐕𝟑𝐤𝐋𝐦𝟗𝐏 password=𝐙𝐪𝟖𝐗𝐰𝐕𝟑𝐤𝐋𝐦𝟗𝐏").endswith("password=***")
    found = environment_secrets({
        "GIT_CONFIG_PARAMETERS": "'http.extraheader'='Authorization: Bearer Zq8XwV3kLm9PqR7a'",
        "MYSQL_OPTS": "-u root -pZq8XwV3kLm9PqR7b", "APP_ENV_LIST": '[{"name": "OPENAI_API_KEY", "value": "Zq8XwV3kLm9PqR7c"}]',
        "APP_CONFIG": "db:\n  password: Zq8XwV3kLm9PqR7d\n", "TOKEN_TYPE": "bearer", "AUTH_METHOD": "password",
        "GOOGLE_APPLICATION_CREDENTIALS": "/etc/hostname"})
    assert sorted(found) == [f"Zq8XwV3kLm9PqR7{c}" for c in "abcd"], found
    monkeypatch.setenv("OPENAI_API_KEY", key)
    backend = OpenAICompatibleBackend(f"model-{key[2:12]}", "http://127.0.0.1:9/v1", api_key_env=None)
    assert key[2:12] not in backend.name
    assert environment_secrets({"GOOGLE_APPLICATION_CREDENTIALS": "/home/nobody-here/.config/gcloud/adc.json"}) == []
    from evalkit.models.redaction import public_endpoint
    assert "Zq8XwV3kLm9P" not in public_endpoint("https://h/v1;Zq8XwV3kLm9PqR7t")
    assert redact("token embeddings are 768 wide; the token budget is 4096") == \
        "token embeddings are 768 wide; the token budget is 4096"


def test_blank_marks_joined_groups_wide_base64_and_docker_or_npm_auth_are_masked():
    """Blank Braille and musical formatting marks between a key's characters; groups joined by ", " and bytes by
    ";"; base64 of UTF-16BE or UTF-32 text; lftp, httpie, rabbitmqctl, nmcli and unrar passwords; the password
    inside a base64 user:password in DOCKER_AUTH_CONFIG or NPM_CONFIG__AUTH."""
    from evalkit.models.redaction import environment_secrets

    key = "Zq8XwV3kLm9PqR7tUv"
    for written in ("\u2800".join(key), "\U0001d173".join(key), "Zq8X, wV3k, Lm9P, qR7t, Uv",
                    ";".join(str(b) for b in key.encode()),
                    *(base64.b64encode(f"k {key}".encode(e)).decode() for e in ("utf-16-be", "utf-32-le"))):
        assert redact(f"out: {written} end", [key]) != f"out: {written} end", written
    for text, value in [("lftp -u me,LftpPw-123 sftp://h", "LftpPw-123"), ("http -a me:HttpiePw-9 GET h/x", "HttpiePw-9"),
                        ("rabbitmqctl add_user app RabbitPw-77", "RabbitPw-77"),
                        ("nmcli dev wifi connect Home password WifiPw-5566", "WifiPw-5566"),
                        ("unrar x -pUnrarPw-12 a.rar", "UnrarPw-12")]:
        assert value not in redact(text), text
    auth = base64.b64encode(b"deploy:DockHubPw-9911").decode()
    found = environment_secrets({"DOCKER_AUTH_CONFIG": json.dumps({"auths": {"r.io": {"auth": auth}}}),
                                 "NPM_CONFIG__AUTH": base64.b64encode(b"me:NpmPw-4242").decode()})
    assert "DockHubPw-9911" in found and "NpmPw-4242" in found, found


def test_a_headless_private_key_a_secrets_data_ascii85_and_a_full_width_authority_are_masked():
    """A key's body before its END line with the BEGIN line cut off (raw and as JSON "\\n"); the values of a
    Kubernetes Secret's data in YAML and JSON (base64 of text under any name; a ConfigMap's words and base64 of
    binary stay); a known secret in Ascii85, in CSS escapes or in base64 lines broken by "\\n" escapes; user-info behind a full-width "＠" or "："."""
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcw\nggSjAgEAAoIBAQC7Zq8XwV3kLm9PqR7t\n"
    for written in (f"...{body}-----END PRIVATE KEY-----", json.dumps({"k": body + "-----END RSA PRIVATE KEY-----"})):
        masked = redact(written)
        assert "MIIEvQ" not in masked and "Zq8XwV3k" not in masked and "END" in masked, masked
    conn = base64.b64encode(b"postgres://app:PgPw-5512@db/app").decode()
    for written in (f"kind: Secret\ndata:\n  conn: {conn}\n  mode: fast\n", json.dumps({"data": {"conn": conn}})):
        assert conn not in redact(written), written
    assert "mode: fast" in redact("kind: ConfigMap\ndata:\n  mode: fast\n  blob: AAECAwQFBgcI\n")
    assert "AAECAwQFBgcI" in redact("data:\n  blob: AAECAwQFBgcI\n")
    wrapped = base64.b64encode(b"user-data:Zq8XwV3kLm9P:more-data-here").decode()
    lines = [wrapped[i:i + 12] for i in range(0, len(wrapped), 12)]
    for text in (json.dumps({"b64": "\n".join(lines)}), '"b64": "' + "\\\\n".join(lines) + '"'):
        assert lines[2] not in redact(text, ["Zq8XwV3kLm9P"]), text  # MIME lines broken by a "\n" escape
    css = "".join(f"\\{ord(c):x} " for c in "Zq8XwV3kLm9P")  # CSS escapes
    assert redact(f"content: '{css}'", ["Zq8XwV3kLm9P"]) == "content: '***'"
    assert redact("api\\5f key=\\73 \\6b -abcdefghijklmnop1234") == "api\\5f key=***"
    assert redact("C:\\data\\bad file") == "C:\\data\\bad file"
    written = base64.a85encode(b"key=Zq8XwV3kLm9P;", adobe=True).decode()
    assert written not in redact(f"out {written}", ["Zq8XwV3kLm9P"])
    for url in ("http://bob\uff1ahunter2secret\uff20db.example.com/x", "http://bob:hunter2secret\uff20db.example.com",
                "\uff48\uff54\uff54\uff50\uff1a\uff0f\uff0fghp_tok1234567890ab\uff20host/v1"):
        masked = redact(f"see {url}")
        assert "hunter2" not in masked and "tok1234567890" not in masked, masked
        assert url.split("\uff20")[-1] in masked, masked  # the host stays readable


@pytest.mark.parametrize("form", ["hex", "hex of a piece", "upper hex", "0x list", "colon hex", "utf-16 hex",
                                  "base32", "lower base32", "base64 of a piece", "percent of a piece", "quoted-printable",
                                  "list of characters", "list of bytes", "\\x escapes", "\\u escapes of a piece",
                                  "entities", "whole in upper case", "base64 in lines of four", "numpy characters",
                                  "numpy bytes", "octal escapes", "joined characters", "spaced characters",
                                  "dump over two lines"])
def test_a_short_secret_or_a_piece_of_it_in_an_encoded_run_is_masked(form):
    """An 8-character password (and any 6-character piece of it) written by a program in any common encoding."""
    secret = "Hx7!kQ2m"
    raw = secret.encode()
    written = {"hex": raw.hex(), "hex of a piece": raw[1:].hex(), "upper hex": raw.hex().upper(),
               "0x list": ", ".join(f"0x{b:02X}" for b in raw), "colon hex": raw.hex(":"),
               "utf-16 hex": secret.encode("utf-16-le").hex(), "base32": base64.b32encode(raw).decode(),
               "lower base32": base64.b32encode(raw).decode().lower(),
               "base64 of a piece": base64.b64encode(raw[1:]).decode(),
               "percent of a piece": "".join(f"%{b:02X}" for b in raw[1:]),
               "quoted-printable": "".join(f"={b:02X}" for b in raw), "list of characters": str(list(secret)),
               "list of bytes": str(list(raw)), "\\x escapes": "".join(f"\\x{b:02x}" for b in raw),
               "\\u escapes of a piece": "".join(f"\\u{ord(c):04x}" for c in secret[:7]),
               "entities": "".join(f"&#{ord(c)};" for c in secret), "whole in upper case": "sunflowerz".upper(),
               "base64 in lines of four": "\n".join(textwrap.wrap(base64.b64encode(b"u:" + raw).decode(), 4)),
               "numpy characters": "[" + " ".join(repr(c) for c in secret) + "]",
               "numpy bytes": "[" + " ".join(f"{b:3d}" for b in raw) + "]",
               "octal escapes": "".join(f"\\{b:o}" for b in raw), "joined characters": ",".join(secret),
               "spaced characters": " ".join(secret),
               "dump over two lines": "\n00000000: 4878 3721  Hx7!\n00000004: 6b51 326d  kQ2m\n"}[form]
    secrets = [secret, "sunflowerz"]
    assert written not in redact(f"printed: {written} done", secrets), written
    from evalkit.models.redaction import mask_echoes
    assert written not in mask_echoes(f"printed: {written} done", secrets), written
    ordinary = "sha 48656c6c6f20776f726c64 and [1, 2, 3, 4, 5, 6, 7] and ['a', 'b', 'c', 'd', 'e', 'f'] JBSWY3DP"
    assert redact(ordinary, secrets) == ordinary


def test_a_credential_inside_a_base64_encoded_file_in_the_environment_is_a_secret():
    """A kubeconfig or a settings file passed base64-encoded under a neutral name (KUBECONFIG_DATA): its token is
    read from the decoded text; base64 of binary data under such a name is no secret."""
    from evalkit.models.redaction import environment_secrets

    config = base64.b64encode(b"apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: kube-T0kQ9xZ\n").decode()
    found = environment_secrets({"KUBECONFIG_DATA": config, "IMAGE_DIGEST": "AAECAwQFBgcICQoLDA0ODw=="})
    assert found == ["kube-T0kQ9xZ"], found


def test_a_passphrases_words_and_a_non_ascii_secret_in_other_writings_are_masked():
    """A piece of a letters-only passphrase is the secret however word-like (``correcthorse``); a secret with
    accented letters echoed decomposed (NFD), as mojibake, percent-encoded or hex in Latin-1."""
    passphrase = "correcthorsebatterystaple"
    for piece in ("correcthorse", "horsebattery", "CORRECTHORSE"):
        assert piece not in redact(f"echo {piece} done", [passphrase]), piece
    assert "correcthorse" not in redact("echo correcthorse done", ["Tr0ub4dor&3-correcthorse"])  # half of it
    secret = "Pässwörd9!xZ"
    for written in (unicodedata.normalize("NFD", secret), secret.encode().decode("latin-1"),
                    quote(secret.encode("latin-1")), secret.encode("latin-1").hex()):
        assert redact(f"echo {written} done", [secret]) == "echo *** done", written


def test_masking_keeps_the_text_around_a_secret_readable_and_json_valid():
    """A base64 line's mask stops at its line (the next line's label stays), and a masked query value or
    signature inside a JSON string keeps the escape of the quote after it, so the text stays JSON."""
    wrapped = base64.b64encode(b"u:Pw9x!q77").decode()
    assert redact(f"piece: {wrapped}\nnext_label: abc\n", ["Pw9x!q77"]) == "piece: ***\nnext_label: abc\n"
    text = json.dumps({"msg": 'see "http://h/x?sig=abc123" now', "why": 'what?"'})
    assert json.loads(redact(text)) == {"msg": 'see "http://h/x?sig=***" now', "why": 'what?"'}


def test_a_short_query_value_named_as_a_credential_is_a_configured_secret():
    """``?pin=48213`` in an endpoint's URL: an endpoint echoing the 5-digit pin bare has it masked in the card and
    the cache; a short value of an ordinary parameter (``?page=2``) is not a secret."""
    from evalkit.models.redaction import configured_secrets, mask_echoes

    secrets = configured_secrets("http://h.example/v1?pin=48213&page=2&lang=en")
    assert secrets == ["48213"], secrets
    assert mask_echoes("cannot rate; the pin was 48213 on page 2", secrets) == "cannot rate; the pin was *** on page 2"


@pytest.mark.parametrize("token", [
    "1//0gRefreshTokenAbCdEfGhIjKlMnOpQrStUvWx", "sbp_0123456789abcdef0123456789abcdef01234567",
    "dp.st.dev.Tok0123456789abcdefghijklmnopqrstuvwxyz", "Abcd0123efgh45.atlasv1.0123456789abcdefghijklmnopqrstuvwxyzAB",
    "fo1_Tok0123456789abcdefghijklmnopqrstuvwxyz", "key-0123456789abcdef0123456789abcdef",
    "SK0123456789abcdef0123456789abcdef", "MTA4NzY1NDMyMTA5ODc2NTQzMg.GabcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"])
def test_more_provider_token_shapes_are_masked_bare(token):
    """Google refresh, Supabase, Doppler, Terraform Cloud, Fly.io, Mailgun, Twilio and Discord bot tokens."""
    shown = redact(f"the service printed {token} and stopped")
    assert token[-12:] not in shown and shown.startswith("the service printed ") and shown.endswith(" and stopped")


def test_a_key_sharing_a_given_keys_prefix_is_masked_whole():
    """Every OpenAI project key starts ``sk-proj-``: a piece of the configured key masked at the start of another
    key leaves the rest of that key no shape reads, so the token that holds the mask is masked whole."""
    given = "sk-proj-TeacherKey0aB1cD2eF3gH4iJ5kL6mN7oP8"
    for other in ("sk-proj-StudentOtherKeyQ9rS8tU7vW6xY5zA4bC3dE2", "sk-ant-api03-StudentOtherKeyZ9x8w7v6u5t4s3r2"):
        shown = redact(f"printed {other} here", [given, "sk-ant-api03-TeacherAnthropic0aB1cD2eF3g"])
        assert shown == "printed *** here", shown


DOCKER_SECRET = "Rb0tS3cret-Pw9x"


def _docker_config(password: str) -> str:
    """A ``.dockerconfigjson`` value: base64 of JSON whose ``auth`` is base64 of ``user:password``."""
    auth = base64.b64encode(f"robot:{password}".encode()).decode()
    return base64.b64encode(json.dumps({"auths": {"reg.example.com": {"auth": auth}}}).encode()).decode()


@pytest.mark.parametrize("text", [
    "export DB_PASS=S3cretPw9", "SMTP_PASS=S3cretPw9", "DB_PASS: S3cretPw9", "pass=S3cretPw9", "pw=S3cretPw9",
    "ROOT_PW=S3cretPw9", "machine api.h login bob password S3cretPw9", "passphrase S3cretPw9",
    "secret S3cretPw9x", "--pass S3cretPw9", 'api_key := "S3cretPw9"', 'api_key <- "S3cretPw9"',
    'token := "S3cretPw9"', "password <- 'S3cretPw9'",
    "\x1b[36mapi_key\x1b[0m=\x1b[35mS3cretPw9\x1b[0m", "\x1b[1mapi_key:\x1b[0m S3cretPw9",
    '\x1b[2m"api_key"\x1b[0m: \x1b[32m"S3cretPw9"\x1b[0m', "\x1b[36mtoken\x1b[0m = \x1b[35mS3cretPw9\x1b[0m",
])
def test_short_password_names_netrc_lines_go_r_assignments_and_coloured_fields_are_masked(text):
    masked = redact(text)
    assert "S3cretPw9" not in masked and "Pw9" not in masked, masked


def test_ordinary_values_of_pass_and_pw_and_prose_around_password_stay_readable():
    for text in ("pass=3 fail=0", "pass: 12/12", "pass: ok", "pw=true", "password required", "passed=41",
                 "bypass=cache", "compass: north", "the password for user bob", "secret sauce", "x := 3"):
        assert redact(text) == text, text


def test_a_docker_config_json_and_other_base64_text_holding_a_credential_are_masked():
    config = _docker_config(DOCKER_SECRET)
    for text in (config, f".dockerconfigjson: {config}", json.dumps({".dockerconfigjson": config}),
                 base64.b64encode(b'{"password": "Pw-Zq8XwV3n"}').decode(),
                 base64.urlsafe_b64encode(b"Authorization: Bearer Zq8XwV3nR7tY2uP6").decode()):
        masked = redact(text)
        assert masked.count("***") >= 1 and config not in masked and "eyJ" not in masked.replace("***", ""), masked
    plain = base64.b64encode(b'{"model": "gpt2", "seed": 3, "notes": "a long harmless note"}').decode()
    assert redact(plain) == plain  # base64 of text with no credential in it stays
    image = base64.b64encode(bytes(range(256)) * 4).decode()
    assert redact(image) == image


@pytest.mark.parametrize("text", [
    "GITHUB_TOKEN: Fq7Zx2Lm9Kp4", "env:\n  - HF_TOKEN: Fq7Zx2Lm9Kp4", "os.environ['HF_TOKEN'] = 'Fq7Zx2Lm9Kp4'",
    "creds = '''Fq7Zx2Lm9Kp4'''", "pwd: Fq7Zx2Lm9Kp4", "credentials: Fq7Zx2Lm9Kp4", "creds=Fq7Zx2Lm9Kp4",
    'subprocess.run(["tool", "--token", "Fq7Zx2Lm9Kp4"])', "setx API_TOKEN Fq7Zx2Lm9Kp4", "API key: Fq7Zx2Lm9Kp4",
    "Client secret = Fq7Zx2Lm9Kp4", "DEPLOY_PRIVATE_KEY: Fq7Zx2Lm9Kp4", "webhook: Fq7Zx2Lm9Kp4",
])
def test_a_field_named_as_a_credential_is_masked_whatever_the_syntax_around_it(text):
    assert "Fq7Zx2" not in redact(text), redact(text)
    long_value = "Fq7Zx2Lm9Kp4" + "Qw8Er" * 200  # a token of a thousand characters is masked to its end
    assert "Qw8Er" not in redact(text.replace("Fq7Zx2Lm9Kp4", long_value)), redact(text.replace("Fq7Zx2Lm9Kp4", long_value))


def test_fields_whose_names_hold_no_credential_or_whose_values_are_no_secret_stay_readable():
    for text in ("max_tokens: 64", "pass_rate: 0.93", "session: s-1234", "num_tokens=77", "tokenizer: gpt2-bpe",
                 "token_type: bearer", "password_file: /etc/pw.txt", "model: gpt2-small", "API version: 2024-06-01",
                 "auth: none", '["--port", "8080"]', "setx PATH C:\\bin"):
        assert redact(text) == text, text


def test_a_reply_echoing_a_given_key_inside_a_docker_config_is_masked_and_other_base64_stays():
    """A model's reply keeps its words (no shape is looked for), but a given key inside base64 of a text —
    a ``.dockerconfigjson``, base64 of JSON holding base64 of ``user:key`` — is masked with its run."""
    from evalkit.models.redaction import mask_echoes

    config = _docker_config(KEY)
    assert mask_echoes(f"here: {config}", [KEY]) == "here: ***"
    harmless = base64.b64encode(b"a plain sentence with token=abc123 in it").decode()
    assert mask_echoes(harmless, [KEY]) == harmless


def test_a_given_password_in_a_hex_dump_of_its_basic_header_is_masked():
    """``xxd -p`` or ``od -An -tx1`` of ``Authorization: Basic <base64 of user:password>``: the hex run decodes to
    text holding a base64 run that holds the password, two layers down."""
    password = "E7xPq2Lm9Wv3"
    header = b"Authorization: Basic " + base64.b64encode(b"root:" + password.encode())
    written = base64.b64encode(password.encode())
    for text in (header.hex(), " ".join(f"{b:02x}" for b in header[20:]), written.hex()):
        masked = redact(text, [password])
        assert masked.count("***") and written.hex()[6:] not in masked, masked


def test_a_path_key_echoed_backwards_from_its_cut_piece_is_masked():
    """A key in an endpoint's path (``/bot<token>/v1``) echoed reversed without its ``bot`` prefix: a piece of
    the reversed key is masked as a piece of the key is; an ordinary word in the reply stays."""
    from evalkit.models.redaction import configured_secrets, mask_echoes

    token = "123456789:AAHk9xQ2Lm4Rt6Yp9ZzWqLp"
    secrets = configured_secrets(f"http://127.0.0.1:9/bot{token}/v1")
    for text in (f"echo {token[::-1]} end", f"echo {token[::-1][:9]} end"):
        assert mask_echoes(text, secrets) == "echo *** end" and redact(text, secrets) == "echo *** end", text
    assert mask_echoes("a bot replies", secrets) == "a bot replies"


def test_a_secret_with_accents_and_a_quote_written_by_json_without_ascii_escapes_is_masked_whole():
    """``json.dumps(..., ensure_ascii=False)`` escapes the quote and the backslash but keeps the accented letters:
    that writing is one of a secret's forms, so no head of it is left before the mask."""
    import json

    for secret in ('Pä"ss\\wört12', 'Zä"q8\\X'):
        written = json.dumps({"a": secret}, ensure_ascii=False)
        assert redact(f"x {written} y", [secret]) == 'x {"a": "***"} y'


@pytest.mark.parametrize("secret", ["Ab1/Cd2/Ef3/Gh4/Ij5", "pw/ä/x9/Zq"])
def test_a_secret_whose_slashes_a_json_writer_escapes_is_masked_whole(secret):
    """PHP's ``json_encode`` and some Java writers escape ``/`` as ``\\/``: a secret whose slashes leave no
    six-character piece between them is masked in that writing, and in that JSON stored inside another JSON
    string, by the redaction, by a reply's masking and by a setting's."""
    import json

    from evalkit.models.redaction import mask_echoes, mask_secrets

    once = json.dumps({"key": secret}).replace("/", "\\/")
    twice = json.dumps(once)
    for written in (once, twice):
        for mask in (redact, mask_echoes, mask_secrets):
            masked = mask(f"x {written} y", [secret])
            assert "***" in masked and "Cd2" not in masked and "x9" not in masked, (mask.__name__, masked)


@pytest.mark.parametrize("secret", ["Kq7 Vw2 Zt9 Lp4 Mx8", "ab=cd=ef=gh=ij=kl", "pässwörd-Ümlaut-Ä9"])
def test_a_given_secret_in_quoted_printable_or_printed_as_bytes_is_masked(secret):
    """Quoted-printable (a mail part: spaces kept or escaped, ``=`` written ``=3D``, UTF-8 bytes as ``=C3=A4``),
    a bytes object's printing (``p\\xc3\\xa4ssw...``) and a uuencoded line are writings of a secret, masked
    whole."""
    import binascii

    raw = secret.encode()
    for written in (binascii.b2a_qp(raw).decode(), binascii.b2a_qp(raw, quotetabs=True).decode(), repr(raw)[2:-1],
                    binascii.b2a_uu(raw).decode().rstrip("\n")):
        assert redact(f"v: {written} end", [secret]) == "v: *** end", written


def test_a_passphrase_whose_spaces_are_written_as_no_break_spaces_is_masked():
    """An HTML page or a word processor writes a passphrase's spaces as ``&nbsp;``, ``&#160;`` or U+00A0."""
    from evalkit.models.redaction import mask_echoes

    secret = "Kq7 Vw2 Zt9 Lp4 Mx8"
    for written in ("&nbsp;".join(secret.split()), "&#160;".join(secret.split()), "\u00a0".join(secret.split())):
        assert redact(f"v: {written} end", [secret]) == "v: *** end" == mask_echoes(f"v: {written} end", [secret])


def test_a_secret_with_quotes_or_line_breaks_quoted_by_a_shell_sql_csv_or_yaml_is_masked():
    """A quote every few characters splits a secret into pieces shorter than the piece rule reads; the quoting
    of a shell (``shlex.quote``), SQL, CSV and a YAML plain scalar are writings of the secret, masked whole."""
    import csv
    import io
    import shlex

    secret = "Rt1'Yu2'Io3'Pa4'Sd5"
    row = io.StringIO()
    csv.writer(row).writerow(["x", secret.replace("'", '"')])
    for written in (shlex.quote(secret), "'" + secret.replace("'", "''") + "'", row.getvalue().strip()):
        masked = redact(f"v: {written} end", [secret, secret.replace("'", '"')])
        assert "Rt1" not in masked and "Sd5" not in masked, masked
    assert redact("key: Zx1\n\nCv2\n\nBn3\n\nMm4\nnext: 1", ["Zx1\nCv2\nBn3\nMm4"]) == "key: ***\nnext: 1"


@pytest.mark.parametrize("secret", ["sk-Zq8XwV3kLm9P", "Kq7 Vw2/Zt9~Lp4"])
def test_a_secret_in_bare_ascii85_or_base85_is_masked_also_inside_a_longer_run(secret):
    """``base64.a85encode`` writes Ascii85 without ``<~ ~>``, and git and ``b85encode`` write RFC 1924's base85:
    the secret's run is masked, alone or after a user name in one encoded text, at each alignment."""
    import base64

    from evalkit.models.redaction import mask_echoes

    for encode in (base64.a85encode, base64.b85encode):
        for before in (b"", b"u", b"us", b"use", b"user:"):
            written = encode(before + secret.encode() + b"!").decode()
            inside = encode(before + secret.encode()[3:-3]).decode()
            for mask in (redact, mask_echoes):
                masked = mask(f"v {written} end", [secret])
                assert "***" in masked and inside[len(before) + 2:-3] not in masked, (encode.__name__, before, masked)


@pytest.mark.parametrize("secret", ["Hq!k(z2#", "abcdefgh9", "pa$$WORDx"])
def test_a_short_secret_in_base32_without_a_digit_is_masked(secret):
    """Base32 of a short secret may hold no digit 2-7 (``JBYSC2ZIPIZCG===`` holds one, ``MFRGGZDFMZTWQOI=``
    none): a run with padding, or of 13 capitals or more, is read as base32 too; prose stays."""
    import base64

    encoded = base64.b32encode(secret.encode()).decode()
    for written in (encoded, encoded.rstrip("="), encoded.lower()):
        assert redact(f"v {written} end", [secret]) == "v *** end", written
    plain = "internationalization and DOCUMENTATIONS stay"
    assert redact(plain, [secret]) == plain


def test_a_uuencoded_line_with_its_padding_stripped_or_written_as_backticks_is_masked():
    """``uuencode`` pads the last group with spaces (or backticks): an editor or a mail relay strips the trailing
    spaces; the line and its body are masked in each writing."""
    import binascii

    secret = "Zq8-xW3kLm9P!"  # 13 bytes: the last group padded
    for backtick in (False, True):
        line = binascii.b2a_uu(secret.encode(), backtick=backtick).decode().rstrip("\n")
        assert line.endswith("``" if backtick else "  ")
        for written in (line, line.rstrip(" `"), line[1:].rstrip(" `")):
            assert redact(f"v {written} end", [secret]) == "v *** end", written


@pytest.mark.parametrize("written, secret", [
    ("Qz7r+Tp4W+vX9m+Kd2L", "Qz7rTp4WvX9mKd2L"), ("QZ7R-TP4W-VX9M-KD2L", "Qz7rTp4WvX9mKd2L"),
    ("qz7r tp4w vx9m kd2l", "Qz7rTp4WvX9mKd2L"), ("Correct Horse Battery Staple", "correct-horse-battery-staple"),
    ("CORRECT_HORSE_BATTERY_STAPLE", "correct-horse-battery-staple")])
def test_a_secret_printed_in_groups_joined_by_plus_or_in_another_case_is_masked(written, secret):
    """Groups of a key form-encoded (spaces written ``+``), upper- or lower-cased, and a passphrase in title case
    or as a constant's name: each is the secret printed in groups, masked by the redaction and a reply's masking."""
    from evalkit.models.redaction import mask_echoes

    for mask in (redact, mask_echoes):
        assert mask(f"v {written} end", [secret]) == "v *** end", mask.__name__


def test_an_encoded_secret_wrapped_over_lines_or_spaced_in_groups_is_masked():
    """``a85encode(..., wrapcol=20)``, base85 in 16-column CRLF lines, base64 printed in groups of four and an
    ``od -b`` list of octal bytes: a secret's encoded writing with line breaks or spaces inside is masked, also
    inside a longer encoded text; no run of it that decodes to a piece of the secret is left."""
    import base64

    from evalkit.models.redaction import mask_echoes

    secret = "Qz7rTp4WvX9mKd2L"
    raw = b"prefix-data-" + secret.encode() + b"-suffix-more-data"
    b85 = base64.b85encode(raw).decode()
    b64 = base64.b64encode(b"u:" + secret.encode()).decode()
    written = {"a85": (base64.a85encode(raw, wrapcol=20).decode(), base64.a85decode),
               "b85": ("\r\n".join(b85[i:i + 16] for i in range(0, len(b85), 16)), base64.b85decode),
               "b64": (" ".join(b64[i:i + 4] for i in range(0, len(b64), 4)), base64.b64decode)}
    for name, (text, decode) in written.items():
        for mask in (redact, mask_echoes):
            masked = mask(text, [secret])
            flat = masked.replace("\r", "").replace("\n", "").replace(" ", "")
            for width in (4, 5):
                for start in range(len(flat)):
                    for end in range(start + width, len(flat) + 1, width):
                        try:
                            decoded = decode(flat[start:end])
                        except ValueError:
                            continue
                        assert not any(secret.encode()[i:i + 6] in decoded for i in range(len(secret) - 5)), \
                            (name, mask.__name__, masked)
    octal = " ".join(f"{b:03o}" for b in secret.encode())
    assert redact(f"od: {octal} end", [secret]) == "od: *** end"


def test_the_digest_that_keeps_two_query_secrets_apart_is_no_test_of_a_guessed_one(tmp_path, monkeypatch):
    """A backend's name carries a digest of its query (two secrets, two cache entries). A plain sha256 of
    ``code=483920`` let whoever read the cache file try every 6-digit code in a second; the digest is keyed by the
    cache folder's own random key (``digest.key``, mode 0600): stable in that folder, another in another, and no
    guess of the query gives it."""
    import hashlib
    import hmac
    import stat

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "one"))
    url = "http://127.0.0.1:9/v1?code=483920"
    name = OpenAICompatibleBackend("m", url, api_key_env=None).name
    digest = name.rsplit("#", 1)[1].split(":")[0]
    assert name == OpenAICompatibleBackend("m", url, api_key_env=None).name and "483920" not in name
    assert digest != hashlib.sha256(b"code=483920").hexdigest()[:10]
    key = (tmp_path / "one" / "digest.key").read_bytes()
    assert digest == hmac.new(key, b"code=483920", "sha256").hexdigest()[:10]
    assert stat.S_IMODE((tmp_path / "one" / "digest.key").stat().st_mode) == 0o600
    assert OpenAICompatibleBackend("m", url.replace("0", "1"), api_key_env=None).name != name
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "two"))
    assert OpenAICompatibleBackend("m", url, api_key_env=None).name != name
    (tmp_path / "three").mkdir()
    (tmp_path / "three" / "digest.key").symlink_to(tmp_path / "one" / "digest.key")  # never read through a link
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "three"))
    assert OpenAICompatibleBackend("m", url, api_key_env=None).name != name


def test_od_dumps_with_offsets_and_base32_in_lower_case_or_its_hex_alphabet_are_masked():
    """``od -c`` prints a secret's characters three spaces apart, each line after the first starting with its
    offset; base32 is also written in lower case and in RFC 4648's "extended hex" alphabet."""
    import base64
    import subprocess

    from evalkit.models.redaction import mask_echoes

    secret = "Zq8XwV3kLm9PqR7tYu2B"
    dump = subprocess.run(["od", "-c"], input=secret, capture_output=True, text=True).stdout
    assert "\n0000020" in dump
    hexed = base64.b32hexencode(secret.encode()).decode()
    for written in (dump, base64.b32encode(secret.encode()).decode().lower(), hexed, hexed.lower()):
        for mask in (redact, mask_echoes):
            masked = mask(f"v {written} end", [secret])
            assert "***" in masked and "q   8" not in masked and written not in masked, (mask.__name__, masked)


def test_a_piece_of_a_secret_escaped_in_part_or_percent_encoded_twice_is_masked():
    """A cut piece of a secret with every other character ``\\u``-escaped, or ``%XX``-escaped twice (``%2554``),
    was left: the escape runs were read only where escapes follow each other. Escapes mixed with plain characters
    are read as one run now; an ordinary URL's escapes and accented JSON stay as written."""
    from evalkit.models.redaction import mask_echoes

    secret = "Tf5WxB8mKq2ZrJ7uPd"
    mixed = "".join(f"\\u{ord(c):04x}" if i % 2 else c for i, c in enumerate(secret))
    twice = "".join(f"%25{ord(c):02X}" for c in secret)
    for whole in (mixed, twice):
        piece = whole[:len(whole) * 11 // 18]  # the first 11 characters of the secret, so written
        for mask in (redact, mask_echoes):
            masked = mask(f"v {piece} end", [secret])
            assert masked == "v *** end" or masked.startswith("v ***"), (mask.__name__, masked)
            assert "Tf5" not in masked and "%2554" not in masked and "0057" not in masked
    plain = 'see https://example.com/a%20b%20c/d and {"name": "\\u00e9t\\u00e9 caf\\u00e9"}'
    assert mask_echoes(plain, [secret]) == plain


def test_base64_wrapped_with_escaped_line_breaks_in_json_stays_valid_json():
    """Base64 of a log holding a secret, wrapped with CRLF and written as a JSON string: a run read from the ``n`` of
    an escaped ``\\n`` was masked with it, leaving ``\\r\\***``, an invalid escape. The escape stays whole."""
    secret = "Qz7RkW2pLmX9vT4nHb"
    wrapped = base64.encodebytes(f"log line with {secret} and more text ".encode() * 4).decode().replace("\n", "\r\n")
    masked = redact(json.dumps({"case": "b64crlf", "value": wrapped}), [secret])
    assert "***" in masked and secret not in base64.b64decode(json.loads(masked)["value"].replace("*", "A") + "==")\
        .decode("latin-1")


def test_base64_or_hex_of_a_gzipped_or_zlib_text_holding_a_secret_is_masked():
    """Base64 of a gzipped config (a Kubernetes secret, a compressed token), or hex of a zlib stream, hid the secret
    from every reading: the compressed bytes are read inflated."""
    import gzip
    import zlib

    from evalkit.models.redaction import mask_echoes

    secret = "Tf5WxB8mKq2ZrJ7uPd"
    config = f"endpoint: https://api.example.com\ntoken: {secret}\n".encode() * 3
    for written in (base64.b64encode(gzip.compress(config)).decode(), zlib.compress(config[:60]).hex(),
                    base64.b64encode(gzip.compress(base64.b64encode(config))).decode()):
        for mask in (redact, mask_echoes):
            assert mask(f"v {written} end", [secret]) == "v *** end", mask.__name__
    clean = base64.b64encode(gzip.compress(b"endpoint: https://api.example.com\n" * 3)).decode()
    assert mask_echoes(f"v {clean} end", [secret]) == f"v {clean} end"


def test_a_secret_printed_u_escaped_and_kept_json_escaped_again_is_masked():
    """A notebook cell printed the key ``\\u``-escaped (whole, or every other character); the executed notebook
    keeps that output JSON-escaped once more (``\\\\u0051``), which no reading decoded. Both are masked."""
    secret = "Qz7RkW2pLmX9vT4nHb"
    whole = "".join(f"\\u{ord(c):04x}" for c in secret)
    mixed = "".join(f"\\u{ord(c):04x}" if i % 2 == 0 else c for i, c in enumerate(secret))
    notebook = json.dumps({"outputs": [{"text": [f"A {whole}\n", f"B {mixed}\n"]}]})
    assert "\\\\u0051" in notebook
    masked = redact(notebook, [secret])
    assert json.loads(masked)["outputs"][0]["text"] == ["A ***\n", "B ***\n"], masked


def test_a_secret_written_as_dotted_byte_numbers_or_as_unicode_code_points_is_masked():
    """``71.118.55...`` (its bytes as decimal numbers joined by dots) and ``U+0047 U+0076 ...`` (its code points as
    Unicode writes them, either case) are writings of the secret, masked whole; other dotted numbers stay."""
    secret = "Gv7Qx~~~Kp??>>Zr9Lm2Wt8Yb"
    dotted = ".".join(str(b) for b in secret.encode())
    points = " ".join(f"U+{ord(c):04X}" for c in secret)
    assert redact(f"dotted {dotted} and {points} and {points.lower().replace('u+', 'U+')}", [secret]) \
        == "dotted *** and *** and ***"
    assert redact("release 10.0.0.1 of U+0041", [secret]) == "release 10.0.0.1 of U+0041"


def test_a_file_in_a_folder_named_for_credentials_is_a_file_and_a_key_in_a_url_path_is_masked():
    """A path segment that names credentials (``/secrets/``, ``/passwd/``) announces a key in a URL's path, but a
    file name of a common kind after it (``cards/passwd/card.json``, a board's refusal line) is a file, shown."""
    assert redact("cards/passwd/card.json: a symbolic link") == "cards/passwd/card.json: a symbolic link"
    assert redact("see /srv/secrets/notes.md, then") == "see /srv/secrets/notes.md, then"
    assert redact("GET https://h/api/token/Ab3dE5gH7jK9 200") == "GET https://h/api/token/*** 200"


def test_a_key_file_named_in_a_url_path_and_a_password_after_a_block_marker_are_masked():
    """After a path segment naming keys, only a word-like file name (``card.json``) is a file: a random or hex key
    with an extension is masked; ``password: |`` is a YAML block's marker, ``password: |#key`` a value."""
    assert redact("https://api.example.com/v1/apikey/9f8e7d6c5b4a39281706f5e4.json") \
        == "https://api.example.com/v1/apikey/***"
    assert redact("https://h/token/Qm7vT2xR9kL4zz.txt") == "https://h/token/***"
    assert redact("password: |#Qm7vT2xR9kL4") == "password: ***"
    assert redact("db:\n  password: |2- # the key\n    x\n") == "db:\n  password: |2- # the key\n    x\n"


def test_a_model_named_in_a_keys_shape_is_masked_in_the_backends_name_and_its_cache_rows(tmp_path):
    """A model whose name holds a key's known shape (``gpt-AKIA...``, ``qwen-sk-proj-...``), with no secret in the
    environment, is masked in the backend's name, which the call cache stores as its ``backend`` column, and in a
    reply that echoes it; two such models keep apart, and ordinary model names stay as they are."""
    import sqlite3

    from evalkit.models.cache import CallCache
    from evalkit.models.openai_compatible import OpenAICompatibleBackend

    keys = ("gpt-AKIAIOSFODNN7EXAMPLE", "qwen-sk-proj-Mdl4Kq8Zr2Xw7Ty5Ab3CdEf")
    first, second = (OpenAICompatibleBackend(key, "http://127.0.0.1:9/v1", api_key_env=None) for key in keys)
    assert "AKIAIOSFODNN7EXAMPLE" not in first.name and "Mdl4Kq8Zr2Xw7Ty5Ab3CdEf" not in second.name
    assert first.name != OpenAICompatibleBackend("gpt-AKIAIOSFODNN7EXAMPLF", "http://127.0.0.1:9/v1",
                                                 api_key_env=None).name
    cache = CallCache(tmp_path / "calls.sqlite")
    cache.put_many([("k1", first.name, "generate", {"text": "x"}), ("k2", second.name, "generate", {"text": "y"})])
    cache.close()
    stored = sqlite3.connect(tmp_path / "calls.sqlite").execute("select backend from calls").fetchall()
    assert not [row for row in stored if "AKIAIOSFODNN7EXAMPLE" in row[0] or "Mdl4Kq8Zr2Xw7Ty5Ab3CdEf" in row[0]]
    plain = OpenAICompatibleBackend("meta-llama/Llama-3.1-8B-Instruct", "http://127.0.0.1:9/v1", api_key_env=None)
    assert plain.name == "openai:http://127.0.0.1:9/v1:meta-llama/Llama-3.1-8B-Instruct"
    # a reply echoing the name (the cache's value, a card's examples) masks it in any case and encoding
    import base64

    echo = second._without_secrets(f"I am {keys[1]} ({keys[1].upper()}, {base64.b64encode(keys[1].encode()).decode()})")
    assert "Mdl4Kq8Zr2Xw7Ty5Ab3CdEf".lower() not in echo.lower() and base64.b64encode(keys[1].encode()).decode() not in echo
    assert plain._without_secrets("I am meta-llama/Llama-3.1-8B-Instruct") == "I am meta-llama/Llama-3.1-8B-Instruct"


@pytest.mark.parametrize("text, shown", [
    ("hf_token: &tok Wq7Zr2Lx9Mv4Kp8Nt3Ys", "hf_token: &tok ***"),
    ("api_key: &k !!str Pk3Vb9Xr6Lq2Wz8Mx", "api_key: &k !!str ***"),
    ('password: !!str "correct horse"', 'password: !!str "***"'),
    ("api_key: !!str\n  Vq7Zx2Lm9Kp4Rt", "api_key: !!str\n  ***"),
    ("server: {host: h, token: &t Rt6Yh2Zp8Kc4Nw7B}", "server: {host: h, token: &t ***}"),
    ("password: *pw\ntoken: *tok", "password: *pw\ntoken: *tok"),
    ("password: !Xk9pw5 tail", "password: ***"),
    ("api_key: *Vq7Zx2Lm9Kp4Rt", "api_key: ***"),
    ("secret:\n  key: abc\ntoken:\n  name: foo", "secret:\n  key: abc\ntoken:\n  name: foo"),
])
def test_a_yaml_anchor_tag_or_alias_is_kept_and_the_value_behind_it_masked(text, shown):
    """A YAML anchor or tag before a credential's value was masked in its place and the value kept; an alias
    (``*pw``) or a mapping key on the next line is no value. A password that starts with ``!`` or ``*`` and
    holds a digit is a password."""
    assert redact(text) == shown


def test_a_reply_echoing_a_model_name_masks_only_its_credential_parts():
    """A model named with a key (``gpt-4o-mini?api_key=K``) has only the key masked where a reply echoes it:
    its ordinary parts (``gpt-4o-mini``) stay readable."""
    from evalkit.models.openai_compatible import OpenAICompatibleBackend

    model = OpenAICompatibleBackend("gpt-4o-mini?api_key=Zq8vLm3pWx9Qa1", "http://127.0.0.1:9/v1", api_key_env=None)
    assert model._without_secrets("I am gpt-4o-mini-2024-07-18, key Zq8vLm3pWx9Qa1") == \
        "I am gpt-4o-mini-2024-07-18, key ***"
