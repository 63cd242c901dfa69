"""A LoRA adapter served by vLLM (``vllm serve <base> --enable-lora --lora-modules <name>=<folder>``) is scored
through the OpenAI-compatible door under its own name: here against a local fake server that answers as vLLM does
(chat completions with top log-probabilities)."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from evalkit.cli.commands import main
from evalkit.paireval import read_meta_eval, write_meta_eval
from tests.fakes import FakeChatServer, chat_reply

ADAPTER = "paireval-lora"  # the name given to --lora-modules


def _vllm_like(body: dict, count: int) -> tuple[int, dict]:
    """P(Yes) 0.9 for the on-topic reply, 0.2 otherwise, as top log-probabilities (a little mass elsewhere)."""
    if body["model"] != ADAPTER:
        return 404, {"error": {"message": f"The model `{body['model']}` does not exist."}}
    text = body["messages"][-1]["content"]
    yes = 0.9 if "Two blocks north." in text else 0.2
    top = sorted([("Yes", 0.95 * yes), ("No", 0.95 * (1 - yes)), ("Maybe", 0.05)], key=lambda t: -t[1])
    return 200, chat_reply(top[0][0], [(token, math.log(p)) for token, p in top])


def test_the_cli_scores_with_the_served_adapter_by_its_name_and_reads_its_logprobs(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    server = FakeChatServer(_vllm_like)
    try:
        frame = pd.DataFrame({"context": [["Where is the station?"], ["Do you like tea?"]],
                              "response": ["Two blocks north.", "Purple elephants sing."], "score": [5, 1]})
        source = write_meta_eval(frame, tmp_path / "set.jsonl")
        assert main(["paireval", "score", "--input", str(source), "--output", str(tmp_path / "out.csv"),
                     "--method", "directeval-lm", "--backend", "openai", "--model", ADAPTER,
                     "--base-url", server.base_url, "--no-cache"]) == 0
        assert server.requests and {request["model"] for request in server.requests} == {ADAPTER}
        assert all(request["logprobs"] is True and request["max_tokens"] == 1 for request in server.requests)
        scored = read_meta_eval(tmp_path / "out.csv")
        # read from the log-probabilities, renormalised over Yes/No (a parsed answer would give 1 and 0)
        assert scored["directeval-lm"].tolist() == pytest.approx([0.9, 0.2])
    finally:
        server.close()
