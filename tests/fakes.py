"""Test doubles: a scripted backend and a programmable OpenAI-compatible HTTP server on loopback."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Sequence

from evalkit.models import GenerationResult, LabelResult, Messages


class ScriptedBackend:
    """Answers from a function of the prompt text; counts how many prompts reached it."""

    def __init__(self, answer: Callable[[str], str], name: str = "scripted:test"):
        self.answer, self.name, self.calls = answer, name, 0

    def label_probs(self, prompts: Sequence[Messages], labels: Sequence[str]) -> list[LabelResult]:
        self.calls += len(prompts)
        results = []
        for messages in prompts:
            text = self.answer(messages[-1]["content"])
            probs = {label: (0.9 if label == text else 0.1 / (len(labels) - 1)) for label in labels} \
                if text in labels else None
            results.append(LabelResult(probs, text, "logprobs", 0.5 if probs else 0.0, 10, 1))
        return results

    def generate(self, prompts, *, max_tokens=128, temperature=0.0, n=1, seed=0) -> list[GenerationResult]:
        self.calls += len(prompts)
        return [GenerationResult([self.answer(m[-1]["content"])] * n, 10, 5) for m in prompts]


class FakeChatServer:
    """/v1/chat/completions on 127.0.0.1 answering from ``respond(body, count) -> (status, json or raw bytes)``."""

    def __init__(self, respond: Callable[[dict, int], tuple[int, dict]]):
        self.respond, self.requests, self.headers = respond, [], []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                status, payload = server.respond(body, len(server.requests))
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()  # bytes: sent as is
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_reply(content: str, top: list[tuple[str, float]] | None = None) -> dict:
    """A chat-completions reply, with top log-probabilities for the first token when given."""
    choice: dict = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if top is not None:
        choice["logprobs"] = {"content": [{"token": top[0][0], "logprob": top[0][1],
                                           "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top]}]}
    return {"choices": [choice], "usage": {"prompt_tokens": 12, "completion_tokens": 1}}
