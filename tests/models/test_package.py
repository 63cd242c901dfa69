"""The model door as a package: every name the kit imports, names and cache keys pinned byte for byte (the
call caches of existing users stay valid), the RetryPolicy value, the opt-in llama.cpp engine."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import evalkit.models as models
from evalkit.models.cache import call_key
from evalkit.models import OpenAICompatibleBackend, RetryPolicy

PACKAGE = Path(models.__file__).parent


def test_every_name_the_kit_imports_is_still_there():
    used = ["Messages", "LabelResult", "GenerationResult", "Backend", "BackendError", "TransformersBackend",
            "LlamaCppBackend", "OpenAICompatibleBackend", "CachedBackend", "open_backend", "parse_label", "redact",
            "ParsedVerdicts", "warn_if_parsed", "one_hot", "_folder_fingerprint", "_file_identity", "_chat_url"]
    assert [name for name in used if not hasattr(models, name)] == []
    assert all(hasattr(models, name) for name in models.__all__)


def test_each_module_is_short_and_none_shadows_a_library():
    lengths = {path.name: len(path.read_text().splitlines()) for path in PACKAGE.glob("*.py")}
    assert max(lengths.values()) <= 400, lengths
    assert not {"transformers.py", "openai.py", "http.py", "requests.py"} & set(lengths)


@pytest.mark.parametrize("base_url, name", [
    ("http://127.0.0.1:8000/v1", "openai:http://127.0.0.1:8000/v1:m"),
    ("http://127.0.0.1:8000/v1/", "openai:http://127.0.0.1:8000/v1:m"),
    ("https://me:pw@h.example/v1", "openai:https://***@h.example/v1:m"),
    ("https://me:longer-password@h.example/v1", "openai:https://***@h.example/v1:m"),
    ("https://api.openai.com/v1", "openai:https://api.openai.com/v1:m"),
])
def test_backend_names_are_pinned(base_url, name):
    assert OpenAICompatibleBackend("m", base_url, api_key_env=None).name == name


def test_cache_keys_are_pinned():
    name = "openai:http://127.0.0.1:8000/v1:m"
    messages = [{"role": "user", "content": "Hi"}]
    generate = {"max_tokens": 128, "temperature": 0.0, "n": 1, "seed": 0}
    assert call_key(name, "generate", messages, generate) == \
        "4a4f26bd077c3b634ec2930357140e2f644f70c07ddc2d7b42c6fd534f46ec66"
    assert call_key(name, "label_probs", messages, {"labels": ["Yes", "No"]}) == \
        "ea49a07f86442e90e5a8d1a7ca7d02f5268d6d0155d142a9647d192a6ab515cc"


def test_local_weights_fingerprints_are_pinned(tmp_path):
    (tmp_path / "config.json").write_text('{"a": 1}')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "w.bin").write_bytes(bytes(range(256)) * 10)
    assert models._folder_fingerprint(tmp_path) == "6fc3c830df6e549c"
    assert models._file_identity(tmp_path / "sub" / "w.bin") == "f12ca97d6a4f65e3"


def test_the_retry_policy_is_one_value_and_the_old_keywords_still_build_it():
    policy = RetryPolicy(max_retries=1, backoff_s=0.25, timeout_s=2.0, deadline_s=5.0)
    by_keywords = OpenAICompatibleBackend("m", "http://h/v1", max_retries=1, backoff_s=0.25, timeout_s=2.0,
                                          deadline_s=5.0)
    assert by_keywords.retry == policy and OpenAICompatibleBackend("m", "http://h/v1", retry=policy).retry == policy
    assert (by_keywords.max_retries, by_keywords.backoff_s, by_keywords.timeout_s, by_keywords.deadline_s) == \
        (1, 0.25, 2.0, 5.0)
    assert OpenAICompatibleBackend("m", "http://h/v1").retry == RetryPolicy()  # the defaults live in one place
    with pytest.raises(ValueError, match="give retry= or timeout_s, not both"):
        OpenAICompatibleBackend("m", "http://h/v1", timeout_s=3.0, retry=policy)
    with pytest.raises(ValueError, match=r"timeout_s and deadline_s must be above 0 \(got 0, 180.0\)"):
        OpenAICompatibleBackend("m", "http://h/v1", timeout_s=0)
    with pytest.raises(Exception):
        policy.timeout_s = 1.0  # frozen


def test_the_llamacpp_engine_says_it_is_opt_in(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if llama-cpp-python were not installed
    with pytest.raises(ImportError, match=r"opt-in .*`make llamacpp`"):
        models.LlamaCppBackend()
