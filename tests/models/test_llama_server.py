"""Judges through a real OpenAI-compatible server: llama.cpp's server on the SmolLM2 GGUF, on loopback.

``make install`` builds llama.cpp; the test adds the server's extra packages when they are missing (if they
cannot be installed the test is skipped and says why).
"""
from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import requests

from evalkit.models.cache import CallCache
from evalkit.models.defaults import smollm2_gguf_file
from tests.llama import ensure_llama_cpp, venv_install_lock
from evalkit.upheld.llm_judges import judge
from evalkit.models import CachedBackend, OpenAICompatibleBackend

pytestmark = pytest.mark.slow
LLAMA_CPP = "llama-cpp-python[server]==0.3.36"


def _ensure_llama_cpp() -> None:
    """llama.cpp is opt-in (`make llamacpp`, built here when missing, see tests/llama.py); its server's
    extra packages (pure Python) are installed here the first time."""
    ensure_llama_cpp()
    with venv_install_lock():
        if importlib.util.find_spec("uvicorn") and importlib.util.find_spec("sse_starlette"):
            return
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-c", "constraints.txt",
                               LLAMA_CPP], cwd=Path(__file__).resolve().parents[2], capture_output=True,
                              text=True, timeout=1200)
    if done.returncode != 0:
        pytest.skip(f"could not install the server extras of {LLAMA_CPP}: {done.stderr[-800:]}")
    importlib.invalidate_caches()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    _ensure_llama_cpp()
    port = _free_port()
    # The server logs a lot while loading: to a file, since an unread pipe would fill up and block it.
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log = log_path.open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf_file()), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "4096", "--model_alias", "smollm2"],
        stdout=log, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 180
    while time.time() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama.cpp server exited: {log_path.read_text()[-1500:]}")
        try:
            if requests.get(f"{base}/models", timeout=2).status_code == 200:
                break
        except requests.RequestException:
            time.sleep(1)
    else:
        process.kill()
        pytest.fail("llama.cpp server did not come up within 180 s")
    yield base
    process.terminate()
    process.wait(timeout=30)
    log.close()


@pytest.fixture
def items() -> pd.DataFrame:
    return pd.DataFrame({
        "item_id": ["t1|m", "t2|m"],
        "history": [[("user", "I want to book a table for two tonight.")], [("user", "What's the weather like?")]],
        "reference": ["Sure, what time would you like?", "It's sunny and warm today."],
        "candidate": ["Of course! At what time?", "I like turtles."]})


def test_generation_label_probs_and_cache_through_a_real_server(server_url, items, tmp_path):
    backend = OpenAICompatibleBackend("smollm2", server_url, api_key_env=None, max_concurrency=2)
    door = CachedBackend(backend, CallCache(tmp_path / "calls.sqlite"))

    [reply] = door.generate([[{"role": "user", "content": "Say hello in one word."}]], max_tokens=8)
    assert reply.texts[0] and reply.completion_tokens > 0

    [probs] = door.label_probs([[{"role": "user", "content": "Is the sky blue? Answer Yes or No."}]], ["Yes", "No"])
    assert probs.method == "logprobs" and probs.probs is not None
    assert sum(probs.probs.values()) == pytest.approx(1.0)

    scores = judge(items, "yes_no", door)
    assert list(scores.columns) == ["item_id", "judge", "target", "score", "status", "method", "probs", "raw_text"]
    assert scores["status"].eq("ok").all() and scores["score"].between(0, 1).all()
    explained = judge(items, "yes_no_explain", door)
    assert set(explained["status"]) <= {"ok", "abstain"} and explained["raw_text"].str.len().gt(0).all()

    sent = backend.attempts
    assert judge(items, "yes_no", door)["score"].tolist() == scores["score"].tolist()
    assert backend.attempts == sent  # the rerun was answered by the cache
    assert door.telemetry.summary()["cache_hits"].sum() >= len(items)


def test_a_judge_card_through_the_server_from_a_spec_file(server_url, tmp_path, monkeypatch, capsys):
    """``evalkit judge card --judge spec.yml`` with an OpenAI-compatible endpoint: a prompt of one's own, its
    labels, a price; the card counts the server's calls and tokens and prices them."""
    import json

    from evalkit.cli.commands import main
    from evalkit.paireval.schema import write_meta_eval

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    contexts = [["I want to book a table for two tonight."], ["What's the weather like?"], ["Any plans?"]]
    rows = [{"context": c, "response": r, "reference": ref, "score": s}
            for c, pairs in zip(contexts, [[("Of course! At what time?", 4.5), ("I like turtles.", 1.0)],
                                           [("Sunny and warm.", 4.0), ("Tables are wooden.", 1.5)],
                                           [("Going hiking with friends.", 4.2), ("Blue.", 1.2)]])
            for (r, s), ref in zip(pairs, ["a reference"] * 2)]
    write_meta_eval(pd.DataFrame(rows), tmp_path / "mine.jsonl")
    (tmp_path / "judge.yml").write_text(
        f"kind: lm\nname: smollm2-endpoint\nbackend: openai\nmodel: smollm2\nbase_url: {server_url}\n"
        "template: |\n  Conversation: {history}\n  Reply: {candidate}\n  Is the reply a sensible next turn? "
        "Answer Yes or No.\nlabels: [\"Yes\", \"No\"]\nvalues: [1, 0]\nprice_per_1k_tokens: 0.5\n")
    assert main(["judge", "card", "--judge", str(tmp_path / "judge.yml"), "--set", str(tmp_path / "mine.jsonl"),
                 "--half", "all", "--bootstrap", "0", "--out", str(tmp_path / "card")]) == 0, capsys.readouterr().err
    record = json.loads((tmp_path / "card" / "card.json").read_text())
    (cost,) = record["costs"]
    assert record["judge"] == "smollm2-endpoint" and cost["items"] == 6 and cost["calls"] == 6
    assert cost["prompt_tokens"] > 0 and cost["money"] == pytest.approx(
        (cost["prompt_tokens"] + cost["completion_tokens"]) / 1000 * 0.5)
    assert record["rows"][0]["n"] + record["rows"][0]["missing"] == 6


def test_chapter_4_runs_its_lm_judges_through_the_server(server_url, tmp_path):
    """Chapter 4 at smoke size with ``backend: openai``: its LM judges go to the endpoint (named by the model),
    the LoRA judge is left out and says why, and the LM rows of its tables hold numbers."""
    import json

    from evalkit.book import runner

    params = runner.load_params("smoke")
    params["notebooks"]["04_pairwise_judge"].update(backend="openai", base_url=server_url, model="smollm2")
    params["name"] = "smoke, chapter 4 through llama.cpp's server"
    (run,) = runner.run_notebooks(params, only=["04"], out_dir=tmp_path / "out")
    results = json.loads(run.results.read_text())
    assert results["lm_training"] is None
    methods = {row["method"] for row in results["lm_table"]}
    assert "smollm2 zero-shot" in methods and not any("LoRA" in m for m in methods)
    scored = [row for row in results["lm_table"] if row["method"] == "smollm2 zero-shot"]
    assert scored and all(row["n"] > 0 for row in scored)
    assert any(row["pearson"] is not None and -1 <= row["pearson"] <= 1 for row in scored)
    notebook = run.executed.read_text()
    assert "The PairEval LM judge is left out of this run" in notebook and "backend is `openai`" in notebook
