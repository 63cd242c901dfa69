"""The model door: one small protocol through which every language-model call of the kit goes.

Two operations, both batched:

* :meth:`Backend.label_probs` — for each prompt (chat messages), the probability of each label word
  ("Yes"/"No", "A"/"B", "1".."5") as the model's next token, normalised over the labels;
* :meth:`Backend.generate` — text for each prompt, with max tokens, temperature, n samples and a seed.

Implementations: :class:`TransformersBackend` (any local folder or Hugging Face id; the default is the
converted SmolLM2-135M-Instruct) and :class:`OpenAICompatibleBackend` (vLLM, Ollama, llama.cpp server,
OpenAI). :class:`CachedBackend` wraps either with the call cache and telemetry; :func:`open_backend` builds
the usual stack from a few settings.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from .cache import CallCache, CallRecord, Telemetry, call_key

__all__ = ["Messages", "LabelResult", "GenerationResult", "Backend", "BackendError", "TransformersBackend",
           "OpenAICompatibleBackend", "CachedBackend", "open_backend", "parse_label"]

Messages = Sequence[Mapping[str, str]]


@dataclass(frozen=True)
class LabelResult:
    """Next-token label probabilities for one prompt.

    ``probs`` is None when the model put no usable mass on any label (an abstention); ``text`` is what the
    model would say (top token, or the generated text when the probabilities came from parsing);
    ``method`` is ``"logprobs"`` or ``"generated"``; ``label_mass`` the raw probability the labels held
    before normalising (1.0 for a parsed generation).
    """

    probs: dict[str, float] | None
    text: str
    method: str
    label_mass: float
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class GenerationResult:
    """Generated samples for one prompt."""

    texts: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0


class BackendError(RuntimeError):
    """A model endpoint failed for good (after its retries)."""


@runtime_checkable
class Backend(Protocol):
    """What every model backend offers. ``name`` identifies backend, model and weights (cache key part)."""

    name: str

    def label_probs(self, prompts: Sequence[Messages], labels: Sequence[str]) -> list[LabelResult]: ...

    def generate(self, prompts: Sequence[Messages], *, max_tokens: int = 128, temperature: float = 0.0,
                 n: int = 1, seed: int = 0) -> list[GenerationResult]: ...


def parse_label(text: str, labels: Sequence[str]) -> str | None:
    """The first label that appears in ``text`` as a whole word (case-insensitive), or None.

    >>> parse_label("Yes. The two replies match.", ["Yes", "No"])
    'Yes'
    >>> parse_label("Score: 4 because ...", ["1", "2", "3", "4", "5"])
    '4'
    >>> parse_label("I cannot tell.", ["Yes", "No"]) is None
    True
    """
    pattern = r"(?<![\w])(" + "|".join(re.escape(label) for label in labels) + r")(?![\w])"
    match = re.search(pattern, text, flags=re.IGNORECASE)
    if match is None:
        return None
    found = match.group(1).lower()
    return next(label for label in labels if label.lower() == found)


def one_hot(label: str | None, labels: Sequence[str]) -> dict[str, float] | None:
    """The label distribution of a generated (parsed) verdict: all mass on ``label``; None for an abstention.

    >>> one_hot("No", ["Yes", "No"])
    {'Yes': 0.0, 'No': 1.0}
    """
    return None if label is None else {name: float(name == label) for name in labels}


def _parsed_result(text: str, labels: Sequence[str], prompt_tokens: int, completion_tokens: int) -> LabelResult:
    label = parse_label(text, labels)
    probs = one_hot(label, labels)
    return LabelResult(probs, text, "generated", 1.0 if label else 0.0, prompt_tokens, completion_tokens)


# --------------------------------------------------------------------------- local transformers

def _folder_fingerprint(folder: Path) -> str:
    """Hash of a model folder's file names, sizes and (small files') contents — changes when weights do."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}:{stat.st_size}".encode())
        if stat.st_size < 5_000_000:
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class TransformersBackend:
    """A local causal LM through transformers: fp32 on CPU by default, chat template applied.

    ``model`` is a folder or a Hugging Face id (None: the default SmolLM2-135M-Instruct); ``adapter`` an
    optional PEFT/LoRA folder. With ``batch_size`` 1 (the CPU default) label probabilities are computed
    one prompt at a time, reusing the key/value cache of a prefix shared with the previous prompt
    (``share_prefixes``); with larger batches prompts are sorted by length and run in left-padded batches of
    near-equal length (8 on an accelerator unless given).
    """

    def __init__(self, model: str | Path | None = None, *, adapter: str | Path | None = None,
                 batch_size: int | None = None, dtype: str = "float32", device: str = "cpu",
                 share_prefixes: bool = True, min_shared_prefix: int = 8):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from .defaults import default_lm_path, quiet_model_loading

        quiet_model_loading()
        location = str(model) if model is not None else str(default_lm_path())
        self.tokenizer = AutoTokenizer.from_pretrained(location)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(location, dtype=getattr(torch, dtype)).to(device)
        fingerprint = (_folder_fingerprint(Path(location)) if Path(location).is_dir()
                       else str(getattr(self.model.config, "_commit_hash", None) or "hub"))
        if adapter is not None:
            from peft import PeftModel

            self.model = PeftModel.from_pretrained(self.model, str(adapter))
            fingerprint += "+" + _folder_fingerprint(Path(adapter))
        self.model.eval()
        # On a CPU a batch costs as much as its prompts one by one, plus its padding (measured, see
        # docs/DEVELOPMENT.md), so the default there is 1; accelerators batch.
        self.device = device
        self.batch_size = batch_size if batch_size is not None else (1 if device == "cpu" else 8)
        # One prompt at a time, prompts that open alike reuse the cached keys/values of their common
        # prefix (measured in benchmarks/judge_throughput.py); batched runs compute every prompt whole.
        self.share_prefixes, self.min_shared_prefix = share_prefixes, min_shared_prefix
        self.name = f"transformers:{Path(location).name}:{fingerprint}"

    def _encode(self, prompts: Sequence[Messages]) -> list[list[int]]:
        encoded = []
        for messages in prompts:
            # A prompt ending with an assistant message is a prefill: the model continues that message
            # (e.g. a user proxy whose answer must start with "USER:") instead of opening a new one.
            prefill = bool(messages) and messages[-1]["role"] == "assistant"
            ids = self.tokenizer.apply_chat_template(list(map(dict, messages)), add_generation_prompt=not prefill,
                                                     continue_final_message=prefill, tokenize=True,
                                                     return_dict=True)["input_ids"]
            encoded.append(list(ids))
        return encoded

    def _batches(self, encoded: list[list[int]], max_padding: float = 0.1):
        """Index batches, longest prompts first; a batch closes when full or when the next prompt is more than
        ``max_padding`` shorter than its first — padded positions cost full compute on a CPU (measured:
        batching gains nothing there, padding waste loses), while equal lengths batch well on a GPU."""
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        batch: list[int] = []
        for index in order:
            if batch and (len(batch) == self.batch_size
                          or len(encoded[index]) < (1 - max_padding) * len(encoded[batch[0]])):
                yield batch
                batch = []
            batch.append(index)
        if batch:
            yield batch

    def _padded(self, rows: list[list[int]]):
        import torch

        width = max(map(len, rows))
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=self.device)
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=self.device)
        return ids, mask

    def label_token_ids(self, labels: Sequence[str]) -> dict[str, list[int]]:
        """First-token ids of each label, written bare and after a space; labels may not share a token."""
        ids: dict[str, list[int]] = {}
        for label in labels:
            variants = set()
            for text in (label, " " + label):
                first = self.tokenizer.encode(text, add_special_tokens=False)[0]
                piece = self.tokenizer.decode([first]).strip().lower()
                # Some tokenizers split " 4" into " " + "4": a bare space token says nothing about the label.
                if piece and label.lower().startswith(piece):
                    variants.add(first)
            if not variants:
                raise ValueError(f"label {label!r} has no token of its own in this tokenizer")
            ids[label] = sorted(variants)
        seen: dict[int, str] = {}
        for label, tokens in ids.items():
            for token in tokens:
                if token in seen:
                    raise ValueError(f"labels {seen[token]!r} and {label!r} start with the same token")
                seen[token] = label
        return ids

    def _last_logits_batched(self, encoded: list[list[int]]):
        """(indices, last-position logits) per left-padded batch of near-equal length."""
        import torch

        for batch in self._batches(encoded):
            ids, mask = self._padded([encoded[i] for i in batch])
            # Positions count real tokens only, so a left-padded prompt scores as it would alone.
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            with torch.no_grad():
                # Only the last position's logits are needed: skipping the vocabulary projection elsewhere
                # saves about a fifth of the work for a small model with a large vocabulary.
                logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions,
                                    logits_to_keep=1).logits[:, -1, :]
            yield batch, logits

    def _last_logits_sharing_prefixes(self, encoded: list[list[int]]):
        """(indices, last-position logits) one prompt at a time, reusing the key/value cache of the longest
        prefix shared with the previous prompt. Prompts run in lexicographic token order, so prompts that
        open alike (same instructions, same first conversation) follow each other and only their
        differing tails are computed."""
        import torch
        from transformers import DynamicCache

        cache, previous = None, []
        for index in sorted(range(len(encoded)), key=lambda i: encoded[i]):
            ids = encoded[index]
            shared = 0
            for a, b in zip(previous, ids):
                if a != b:
                    break
                shared += 1
            shared = min(shared, len(ids) - 1)  # at least one token must run to give the next-token logits
            if cache is None or shared < self.min_shared_prefix:
                cache, shared = DynamicCache(config=self.model.config), 0
            else:
                cache.crop(shared - cache.get_seq_length())  # a negative count: drop the previous tail
            with torch.no_grad():
                output = self.model(input_ids=torch.tensor([ids[shared:]], device=self.device),
                                    cache=cache, use_cache=True, logits_to_keep=1)
            previous = ids  # the cache grew in place to cover this whole prompt
            yield [index], output.logits[:, -1, :]

    def label_probs(self, prompts: Sequence[Messages], labels: Sequence[str]) -> list[LabelResult]:
        import torch

        token_ids = self.label_token_ids(labels)
        encoded = self._encode(prompts)
        results: list[LabelResult | None] = [None] * len(prompts)
        chunks = (self._last_logits_sharing_prefixes(encoded) if self.batch_size == 1 and self.share_prefixes
                  else self._last_logits_batched(encoded))
        for batch, logits in chunks:
            probabilities = torch.softmax(logits.float(), dim=-1)
            for row, index in enumerate(batch):
                mass = {label: float(probabilities[row, tokens].sum()) for label, tokens in token_ids.items()}
                total = sum(mass.values())
                top = self.tokenizer.decode([int(probabilities[row].argmax())])
                probs = {label: value / total for label, value in mass.items()} if total > 0 else None
                results[index] = LabelResult(probs, top, "logprobs", total, len(encoded[index]), 1)
        return results  # type: ignore[return-value]

    def generate(self, prompts: Sequence[Messages], *, max_tokens: int = 128, temperature: float = 0.0,
                 n: int = 1, seed: int = 0) -> list[GenerationResult]:
        import torch

        encoded = self._encode(prompts)
        results: list[GenerationResult | None] = [None] * len(prompts)
        sampling = temperature > 0
        # Greedy decoding is deterministic, so it can be batched; sampled prompts run one by one, each
        # seeded, so a result never depends on which other prompts shared its batch.
        batches = self._batches(encoded) if not sampling else ([i] for i in range(len(encoded)))
        for batch in batches:
            ids, mask = self._padded([encoded[i] for i in batch])
            options: dict[str, Any] = {"max_new_tokens": max_tokens, "num_return_sequences": n,
                                       "pad_token_id": self.tokenizer.pad_token_id, "do_sample": sampling}
            if sampling:
                torch.manual_seed(seed)
                options["temperature"] = temperature
            else:
                options.update(temperature=None, top_p=None, top_k=None)
            with torch.no_grad():
                output = self.model.generate(input_ids=ids, attention_mask=mask, **options)
            new_tokens = output[:, ids.shape[1]:]
            for row, index in enumerate(batch):
                samples = new_tokens[row * n:(row + 1) * n]
                texts = [self.tokenizer.decode(s, skip_special_tokens=True).strip() for s in samples]
                completion = sum(int((s != self.tokenizer.pad_token_id).sum()) for s in samples)
                results[index] = GenerationResult(texts, len(encoded[index]), completion)
        return results  # type: ignore[return-value]


# --------------------------------------------------------------------------- OpenAI-compatible HTTP

class OpenAICompatibleBackend:
    """Chat completions over HTTP (vLLM, Ollama, llama.cpp server, OpenAI).

    The API key is read from the environment variable ``api_key_env`` at call time and is never stored,
    logged or part of a cache key. Requests run with at most ``max_concurrency`` in flight; a 429, a 5xx,
    a timeout or a dropped connection is retried with exponential backoff (``backoff_s`` doubling) up to
    ``max_retries`` times, then :class:`BackendError` names the endpoint and the last failure.
    """

    def __init__(self, model: str, base_url: str, *, api_key_env: str | None = "OPENAI_API_KEY",
                 max_concurrency: int = 4, max_retries: int = 3, backoff_s: float = 0.5, timeout_s: float = 120.0,
                 top_logprobs: int = 20):
        self.model, self.base_url = model, base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.max_concurrency, self.max_retries = max_concurrency, max_retries
        self.backoff_s, self.timeout_s, self.top_logprobs = backoff_s, timeout_s, top_logprobs
        self.name = f"openai:{self.base_url}:{model}"
        self.attempts = 0  # requests sent, retries included (for tests and telemetry)

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        import requests

        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        last = "no attempt made"
        for attempt in range(self.max_retries + 1):
            self.attempts += 1
            try:
                response = requests.post(self.endpoint, json=body, headers=headers, timeout=self.timeout_s)
            except (requests.ConnectionError, requests.Timeout) as error:
                last = f"{type(error).__name__}: {error}"
            else:
                if response.status_code == 200:
                    return response.json()
                last = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code != 429 and response.status_code < 500:
                    raise BackendError(f"{self.endpoint} rejected the request ({last})")
                retry_after = response.headers.get("Retry-After")
                if retry_after and retry_after.isdigit() and attempt < self.max_retries:
                    time.sleep(min(float(retry_after), 60.0))
                    continue
            if attempt < self.max_retries:
                time.sleep(self.backoff_s * 2 ** attempt)
        raise BackendError(f"{self.endpoint} failed after {self.max_retries + 1} attempts; last error: {last}")

    def _map(self, function, items: Sequence[Any]) -> list[Any]:
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(function, items))

    @staticmethod
    def _usage(reply: dict[str, Any]) -> tuple[int, int]:
        usage = reply.get("usage") or {}
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)

    def generate(self, prompts: Sequence[Messages], *, max_tokens: int = 128, temperature: float = 0.0,
                 n: int = 1, seed: int = 0) -> list[GenerationResult]:
        def one(messages: Messages) -> GenerationResult:
            texts, prompt_tokens, completion_tokens = [], 0, 0
            # One request per sample: not every server honours `n`, and per-sample seeds keep samples apart.
            for sample in range(n):
                reply = self._post({"model": self.model, "messages": list(map(dict, messages)),
                                    "max_tokens": max_tokens, "temperature": temperature, "seed": seed + sample})
                texts.append((reply["choices"][0]["message"].get("content") or "").strip())
                used = self._usage(reply)
                prompt_tokens, completion_tokens = used[0], completion_tokens + used[1]
            return GenerationResult(texts, prompt_tokens, completion_tokens)

        return self._map(one, prompts)

    def label_probs(self, prompts: Sequence[Messages], labels: Sequence[str]) -> list[LabelResult]:
        def one(messages: Messages) -> LabelResult:
            reply = self._post({"model": self.model, "messages": list(map(dict, messages)), "max_tokens": 1,
                                "temperature": 0.0, "logprobs": True, "top_logprobs": self.top_logprobs,
                                "seed": 0})
            choice = reply["choices"][0]
            text = (choice.get("message", {}).get("content") or "").strip()
            prompt_tokens, completion_tokens = self._usage(reply)
            content = ((choice.get("logprobs") or {}).get("content") or [])
            if not content or not content[0].get("top_logprobs"):
                # This server gives no log-probabilities: fall back to a short generation, parsed.
                generated = self.generate([messages], max_tokens=8)[0]
                return _parsed_result(generated.texts[0], labels, generated.prompt_tokens,
                                      generated.completion_tokens)
            mass = {label: 0.0 for label in labels}
            for candidate in content[0]["top_logprobs"]:
                token = candidate.get("token", "").strip().lower()
                for label in labels:
                    if token == label.lower():
                        mass[label] += math.exp(candidate["logprob"])
            total = sum(mass.values())
            probs = {label: value / total for label, value in mass.items()} if total > 0 else None
            return LabelResult(probs, text, "logprobs", total, prompt_tokens, completion_tokens)

        return self._map(one, prompts)


# --------------------------------------------------------------------------- cache + telemetry wrapper

@dataclass
class CachedBackend:
    """Any backend behind the call cache, with telemetry. Same interface as the backend it wraps."""

    backend: Backend
    cache: CallCache | None = None
    telemetry: Telemetry = field(default_factory=Telemetry)
    chunk_size: int = 256

    @property
    def name(self) -> str:
        return self.backend.name

    def _cached(self, operation: str, prompts: Sequence[Messages], parameters: dict[str, Any], call, build):
        keys = [call_key(self.name, operation, list(map(dict, p)), parameters) for p in prompts]
        found = self.cache.get_many(keys) if self.cache is not None else {}
        # Missing prompts run in chunks, each stored as soon as it is done, so an interrupted run resumes
        # from the last finished chunk; sorting by text keeps prompts that open alike in the same chunk.
        missing = sorted((i for i, key in enumerate(keys) if key not in found),
                         key=lambda i: json.dumps(list(map(dict, prompts[i]))))
        fresh: dict[int, Any] = {}
        elapsed = 0.0
        for start in range(0, len(missing), self.chunk_size):
            chunk = missing[start:start + self.chunk_size]
            started = time.perf_counter()
            answers = call([prompts[i] for i in chunk])
            elapsed += time.perf_counter() - started
            fresh.update(zip(chunk, answers))
            if self.cache is not None:
                self.cache.put_many((keys[i], self.name, operation, asdict(answer)) for i, answer in zip(chunk, answers))
        results, records = [], []
        for i, key in enumerate(keys):
            hit = i not in fresh
            result = build(found[key]) if hit else fresh[i]
            results.append(result)
            records.append(CallRecord(self.name, operation, result.prompt_tokens, result.completion_tokens,
                                      0.0 if hit else elapsed / len(missing), hit))
        self.telemetry.add(records)
        return results

    def label_probs(self, prompts: Sequence[Messages], labels: Sequence[str]) -> list[LabelResult]:
        return self._cached("label_probs", prompts, {"labels": list(labels)},
                            lambda batch: self.backend.label_probs(batch, labels), lambda v: LabelResult(**v))

    def generate(self, prompts: Sequence[Messages], *, max_tokens: int = 128, temperature: float = 0.0,
                 n: int = 1, seed: int = 0) -> list[GenerationResult]:
        parameters = {"max_tokens": max_tokens, "temperature": temperature, "n": n, "seed": seed}
        return self._cached("generate", prompts, parameters,
                            lambda batch: self.backend.generate(batch, **parameters),
                            lambda v: GenerationResult(**v))


def open_backend(kind: str = "transformers", model: str | None = None, *, base_url: str | None = None,
                 adapter: str | None = None, cache: bool | str | Path = True, **options: Any) -> CachedBackend:
    """The usual stack: a backend of ``kind`` ("transformers" or "openai") behind the call cache.

    ``cache`` is True (the default SQLite file), False (no cache) or a path.
    """
    backend: Backend
    if kind == "transformers":
        backend = TransformersBackend(model, adapter=adapter, **options)
    elif kind == "openai":
        if not model or not base_url:
            raise ValueError("an OpenAI-compatible backend needs model= and base_url=")
        backend = OpenAICompatibleBackend(model, base_url, **options)
    else:
        raise ValueError(f"unknown backend kind {kind!r} (transformers or openai)")
    store = None if cache is False else CallCache(None if cache is True else cache)
    return CachedBackend(backend, store)
