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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from .cache import CallCache, CallRecord, Telemetry, call_key

__all__ = ["Messages", "LabelResult", "GenerationResult", "Backend", "BackendError", "TransformersBackend",
           "LlamaCppBackend",           "OpenAICompatibleBackend", "CachedBackend", "open_backend", "parse_label", "redact", "ParsedVerdicts",
           "warn_if_parsed"]

Messages = Sequence[Mapping[str, str]]


@dataclass(frozen=True)
class LabelResult:
    """Next-token label probabilities for one prompt.

    ``probs`` is None when the model put no usable mass on any label (an abstention); ``text`` is what the
    model would say (top token, or the generated text when the probabilities came from parsing);
    ``method`` is ``"logprobs"`` or ``"generated"`` (a parsed answer: its probabilities are one-hot);
    ``label_mass`` the raw probability the labels held before normalising (1.0 for a parsed generation).
    """

    probs: dict[str, float] | None
    text: str
    method: str
    label_mass: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None  # set when the backend could not get a usable answer: an abstention never cached


@dataclass(frozen=True)
class GenerationResult:
    """Generated samples for one prompt (``error`` set: no usable answer this time, so never cached)."""

    texts: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None


class BackendError(RuntimeError):
    """A model endpoint failed for good (after its retries)."""


_SECRET_PATTERNS = [
    (re.compile(r"(?i)\b(bearer|basic)\s+[^\s\"',;]+"), r"\1 ***"),
    (re.compile(r"(?i)((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|key)\s*=\s*)"
                r"[^&\s\"',;]+"), r"\1***"),
    (re.compile(r"(?i)(\"?(?:api[_-]?key|authorization|x-api-key|access[_-]?token|secret|password)\"?\s*:\s*\"?)"
                r"(?!(?:bearer|basic)\s)[^\"\s,}]+"), r"\1***"),
    (re.compile(r"(?i)(\w+://)[^/@\s]+@"), r"\1***@"),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), "sk-***"),
]


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` with credentials masked: the ``secrets`` given, bearer tokens, ``key=...`` query values,
    JSON key fields, user:password in URLs and ``sk-...`` keys.

    >>> redact("https://me:hunter2@host/v1?api_key=abc123&x=1")
    'https://***@host/v1?api_key=***&x=1'
    >>> redact('{"error": "bad header Authorization: Bearer sk-live-0123456789"}')
    '{"error": "bad header Authorization: Bearer ***"}'
    """
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class ParsedVerdicts(UserWarning):
    """Label probabilities that are parsed one-hot answers (the endpoint gave no log-probabilities)."""


def warn_if_parsed(results: Sequence["LabelResult"], what: str) -> int:
    """Warn (once per call) when some of ``results`` are parsed answers rather than probabilities; returns
    how many are. Scores built from them are 0/1 verdicts, which changes what an average or a correlation
    means, so the reader must be told."""
    import warnings

    parsed = sum(1 for r in results if r.method == "generated")
    if parsed:
        warnings.warn(f"{parsed} of {len(results)} {what} verdicts are parsed one-hot answers, not probabilities "
                      "(the endpoint returned no log-probabilities)", ParsedVerdicts, stacklevel=3)
    return parsed


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

def _label_result(probabilities: Any, token_ids: Mapping[str, list[int]], tokenizer: Any,
                  prompt_tokens: int) -> LabelResult:
    """One prompt's next-token distribution (a torch or numpy vector) as label probabilities: each label's
    mass (its token variants summed), renormalised over the labels, with the top token's text."""
    mass = {label: float(probabilities[tokens].sum()) for label, tokens in token_ids.items()}
    total = sum(mass.values())
    top = tokenizer.decode([int(probabilities.argmax())])
    probs = {label: value / total for label, value in mass.items()} if total > 0 else None
    return LabelResult(probs, top, "logprobs", total, prompt_tokens, 1)


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
    near-equal length (8 on an accelerator unless given). Greedy generation runs in left-padded batches of
    ``generate_batch_size`` (default 8) whatever their lengths: decoding reads every weight once per step, so
    on a CPU a step for 8 sequences costs about 3 steps for one (measured in ``benchmarks/engines.py``),
    while the prompts' padding costs only prefill. A batch's shape can change fp32 rounding, so in rare cases a
    continuation could depend on which prompts shared its batch (measured: identical on every prompt tried);
    the call cache keeps whichever came first, so a rerun reads, rather than recomputes, it.
    """

    def __init__(self, model: str | Path | None = None, *, adapter: str | Path | None = None,
                 batch_size: int | None = None, dtype: str = "float32", device: str = "cpu",
                 share_prefixes: bool = True, min_shared_prefix: int = 8, generate_batch_size: int = 8):
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
        self.generate_batch_size = generate_batch_size
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

    def _batches(self, encoded: list[list[int]], max_padding: float = 0.1, size: int | None = None):
        """Index batches of ``size`` (default ``batch_size``), longest prompts first; a batch closes when full or
        when the next prompt is more than ``max_padding`` shorter than its first — padded positions cost full
        compute on a CPU (measured: batching gains nothing there, padding waste loses), while equal lengths
        batch well on a GPU."""
        size = size or self.batch_size
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        batch: list[int] = []
        for index in order:
            if batch and (len(batch) == size
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
                results[index] = _label_result(probabilities[row], token_ids, self.tokenizer, len(encoded[index]))
        return results  # type: ignore[return-value]

    def generate(self, prompts: Sequence[Messages], *, max_tokens: int = 128, temperature: float = 0.0,
                 n: int = 1, seed: int = 0) -> list[GenerationResult]:
        import torch

        encoded = self._encode(prompts)
        results: list[GenerationResult | None] = [None] * len(prompts)
        sampling = temperature > 0
        # Greedy decoding is deterministic, so it can be batched (any lengths: decoding, not the padded
        # prefill, is the cost); sampled prompts run one by one, each seeded, so a result never depends on
        # which other prompts shared its batch.
        batches = (self._batches(encoded, max_padding=1.0, size=self.generate_batch_size) if not sampling
                   else ([i] for i in range(len(encoded))))
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


# Bump when rewrite_gguf or lora_deltas change what they write: rewritten files and cached calls then renew.
_REWRITE_VERSION = "v1"


def _file_identity(path: Path) -> str:
    """A cheap identity of a (large) weights file: its size and the hash of its first and last 4 MB — the
    header, the metadata and the first and last tensors — so two files that share a name do not share cached
    calls. Reading whole multi-GB files at every start would cost seconds."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(4_000_000))
        handle.seek(max(size - 4_000_000, 0))
        digest.update(handle.read(4_000_000))
    return digest.hexdigest()[:16]


def _engine_gguf(model: str | Path | None, weights: str | None, adapter: str | Path | None) -> Path:
    """The GGUF file the llama.cpp engine loads: ``model`` as given (or the default model's, rewritten into
    F16 unless told), rewritten into ``weights`` when given (and an adapter merged in), written once into the
    evalkit cache."""
    from .defaults import cache_dir, smollm2_gguf_file
    from .gguf_weights import GGUF_TYPES, lora_deltas, rewrite_gguf

    weights = weights if weights is not None else ("f16" if model is None else "shipped")
    if weights != "shipped" and weights not in GGUF_TYPES:
        raise ValueError(f"weights {weights!r}: choose shipped or one of {', '.join(GGUF_TYPES)}")
    source = Path(model) if model is not None else smollm2_gguf_file()
    if not source.is_file():
        raise FileNotFoundError(f"{source}: no GGUF file there (the llamacpp engine takes a .gguf path)")
    if adapter is None and weights == "shipped":
        return source
    if weights == "shipped":
        raise ValueError("an adapter is merged into rewritten weights: choose weights f16, f32 or q8_0")
    tag = f"{_REWRITE_VERSION}-{_file_identity(source)[:8]}"
    if adapter is not None:
        tag += "-lora-" + _folder_fingerprint(Path(adapter))[:12]
    target = cache_dir() / "models" / f"{source.stem}-{weights}-{tag}.gguf"
    if not target.is_file():
        deltas = None
        if adapter is not None:
            import gguf as gguf_library

            reader = gguf_library.GGUFReader(str(source))
            arch = reader.get_field("general.architecture").contents()
            deltas = lora_deltas(adapter, heads=int(reader.get_field(f"{arch}.attention.head_count").contents()),
                                 kv_heads=int(reader.get_field(f"{arch}.attention.head_count_kv").contents()))
        rewrite_gguf(source, target, dtype=weights, deltas=deltas)
    return target


class LlamaCppBackend:
    """A GGUF model run in-process by llama.cpp (``llama-cpp-python``), the second local engine.

    ``model`` is a GGUF file, used as it is unless ``weights`` says otherwise; None means the default SmolLM2,
    whose shipped GGUF (Q4_1) is rewritten once into ``weights`` (``f16`` by default; ``f32``, ``q8_0``, or
    ``shipped`` for the file as it is; see :mod:`evalkit.gguf_weights`): llama.cpp has no fast x86 kernel for Q4_1 and multiplies it with 8-bit
    activations, which changed 3 of 8 greedy continuations in ``benchmarks/engines.py``. A LoRA ``adapter`` is
    merged into a rewritten copy (cached by the adapter's fingerprint). Prompts are tokenised by the Hugging
    Face tokenizer with its chat template (the default LM's folder for the default model, else ``tokenizer`` or
    the GGUF's own), so both engines see the same token ids; label probabilities are the softmax of llama.cpp's
    last-position logits. Greedy decoding stops at the tokenizer's end-of-turn tokens. Sampled decoding is
    seeded within this engine (the n-th sample of a call uses ``seed + n``); it does not reproduce
    transformers' samples.
    ``share_prefixes`` reuses the cached keys/values of a prefix shared with the previous prompt; it is off by
    default because llama.cpp's kernels round differently for different batch shapes (measured on the Q4_1
    file: a label probability moved by 0.014 when half its prompt came from the cache), so with it a result
    would depend on which prompt ran before — off, each result depends on its prompt alone.
    """

    def __init__(self, model: str | Path | None = None, *, adapter: str | Path | None = None,
                 weights: str | None = None, tokenizer: str | Path | None = None, threads: int | None = None,
                 context: int = 8192, share_prefixes: bool = False, min_shared_prefix: int = 8):
        try:
            from llama_cpp import Llama
        except ImportError as error:
            raise ImportError("the llamacpp engine needs llama-cpp-python; `make install` builds it (see "
                              "docs/DEVELOPMENT.md, 'Engines')") from error
        from transformers import AutoTokenizer

        from .defaults import default_lm_path, quiet_model_loading

        quiet_model_loading()
        gguf = _engine_gguf(model, weights, adapter)
        if tokenizer is not None:
            self.tokenizer = AutoTokenizer.from_pretrained(str(tokenizer))
        elif model is None:
            self.tokenizer = AutoTokenizer.from_pretrained(str(default_lm_path()))
        else:
            self.tokenizer = AutoTokenizer.from_pretrained(str(Path(model).parent), gguf_file=Path(model).name)
        if threads is None:  # llama-cpp-python's own default is half the cores
            threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        self.llm = Llama(model_path=str(gguf), n_ctx=context, n_threads=threads, n_threads_batch=threads,
                         logits_all=False, verbose=False)
        self.share_prefixes, self.min_shared_prefix = share_prefixes, min_shared_prefix
        stops = {self.tokenizer.eos_token_id, self.llm.token_eos()}
        stops.update(self.tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")
                     if t in self.tokenizer.get_vocab())
        self._stops = {int(t) for t in stops if t is not None and int(t) >= 0}
        tokens = f":tokenizer={Path(tokenizer).name}" if tokenizer is not None else ""
        self.name = (f"llamacpp:{gguf.stem}:{_file_identity(gguf)}{tokens}"
                     f"{':shared' if share_prefixes else ''}")

    _encode = TransformersBackend._encode
    label_token_ids = TransformersBackend.label_token_ids

    def _prefill(self, ids: list[int]) -> None:
        """Evaluate ``ids``, keeping the cached keys/values of the prefix shared with what the context holds."""
        held = list(self.llm.input_ids[:self.llm.n_tokens])
        shared = 0
        for a, b in zip(held, ids):
            if a != b:
                break
            shared += 1
        shared = min(shared, len(ids) - 1)  # at least one token must run to give the next-token logits
        if (self.share_prefixes and shared >= self.min_shared_prefix
                and self.llm._ctx.kv_cache_seq_rm(-1, shared, -1)):
            self.llm.n_tokens = shared
        else:
            self.llm.reset()
            shared = 0
        self.llm.eval(ids[shared:])

    def _last_logits(self):
        import numpy as np

        return np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self.llm.n_vocab(),)).astype(np.float64)

    def label_probs(self, prompts: Sequence[Messages], labels: Sequence[str]) -> list[LabelResult]:
        import numpy as np

        token_ids = self.label_token_ids(labels)
        encoded = self._encode(prompts)
        results: list[LabelResult | None] = [None] * len(prompts)
        for index in sorted(range(len(encoded)), key=lambda i: encoded[i]):  # alike prompts in a row
            self._prefill(encoded[index])
            logits = self._last_logits()
            probabilities = np.exp(logits - logits.max())
            probabilities /= probabilities.sum()
            results[index] = _label_result(probabilities, token_ids, self.tokenizer, len(encoded[index]))
        return results  # type: ignore[return-value]

    def generate(self, prompts: Sequence[Messages], *, max_tokens: int = 128, temperature: float = 0.0,
                 n: int = 1, seed: int = 0) -> list[GenerationResult]:
        encoded = self._encode(prompts)
        results = []
        for ids in encoded:
            texts, completion = [], 0
            for k in range(n):
                self.llm.set_seed(seed + k)
                if not self.share_prefixes:
                    self.llm.reset()  # llama-cpp-python would otherwise reuse a matching prefix
                new: list[int] = []
                # transformers' sampling defaults (top-k 50, no top-p/min-p); temperature 0 is greedy.
                for token in self.llm.generate(ids, temp=temperature, top_k=50 if temperature > 0 else 1,
                                               top_p=1.0, min_p=0.0, repeat_penalty=1.0):
                    new.append(int(token))
                    if int(token) in self._stops or len(new) >= max_tokens:
                        break
                completion += len(new)
                texts.append(self.tokenizer.decode(new, skip_special_tokens=True).strip())
            results.append(GenerationResult(texts, len(ids), completion))
        return results


# --------------------------------------------------------------------------- OpenAI-compatible HTTP

def _chat_url(base_url: str) -> str:
    """``<base_url>/chat/completions``, a query string in ``base_url`` kept after the path.

    >>> _chat_url("https://h/v1/?api-version=2024-06-01")
    'https://h/v1/chat/completions?api-version=2024-06-01'
    """
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))


def _read_until(response, deadline: float) -> bytes:
    """The response body, read in chunks; past ``deadline`` (monotonic seconds) the read stops with a
    timeout, however steadily the server trickles."""
    import requests

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


def _logprobs_problem(logprobs: Any) -> str | None:
    """What makes a reply's ``logprobs`` unusable (None when absent or well-formed): every top candidate
    must be a mapping with a text token and a finite log-probability <= 0."""
    if logprobs is None:
        return None
    content = logprobs.get("content") if isinstance(logprobs, dict) else "bad"
    if content is None:
        return None
    if not isinstance(content, list) or (content and not isinstance(content[0], dict)):
        return "the reply's logprobs are malformed"
    top = content[0].get("top_logprobs") if content else None
    if top is None:
        return None
    if not isinstance(top, list):
        return "the reply's top_logprobs are malformed"
    for candidate in top:
        if not isinstance(candidate, dict) or not isinstance(candidate.get("token", ""), str):
            return "the reply's top_logprobs are malformed"
        value = candidate.get("logprob")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value > 1e-6:
            return f"the reply has an invalid log-probability ({value!r})"
    return None


class OpenAICompatibleBackend:
    """Chat completions over HTTP (vLLM, Ollama, llama.cpp server, OpenAI).

    The API key is read from the environment variable ``api_key_env`` at call time and is never stored,
    logged or part of a cache key; credentials written into ``base_url`` are masked in the backend's name,
    its cache entries and every message. Requests run with at most ``max_concurrency`` in flight. A 429, a
    5xx, a timeout, a dropped connection or a malformed 200 reply (not JSON, no ``choices``, empty content)
    is retried with exponential backoff (``backoff_s`` doubling) up to ``max_retries`` times; each request
    waits at most ``timeout_s`` and a whole call at most ``deadline_s``, then :class:`BackendError` names the
    endpoint, the time spent and the last failure. When one prompt of a batch fails for good, the prompts
    not yet sent are cancelled.
    """

    def __init__(self, model: str, base_url: str, *, api_key_env: str | None = "OPENAI_API_KEY",
                 max_concurrency: int = 4, max_retries: int = 3, backoff_s: float = 0.5, timeout_s: float = 60.0,
                 deadline_s: float = 180.0, top_logprobs: int = 20):
        if timeout_s <= 0 or deadline_s <= 0:
            raise ValueError(f"timeout_s and deadline_s must be above 0 (got {timeout_s}, {deadline_s})")
        self.model, self._base_url = model, base_url.rstrip("/")
        self._url = _chat_url(base_url)
        self.base_url = redact(self._base_url)
        self.api_key_env = api_key_env
        self.max_concurrency, self.max_retries = max_concurrency, max_retries
        self.backoff_s, self.timeout_s, self.deadline_s = backoff_s, timeout_s, deadline_s
        self.top_logprobs = top_logprobs
        self.name = f"openai:{self.base_url}:{model}"
        self.attempts = 0  # requests sent, retries included (for tests and telemetry)

    @property
    def endpoint(self) -> str:
        """The chat-completions URL as shown in messages (credentials masked)."""
        return redact(self._url)

    def _secrets(self) -> list[str]:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return [key] if key else []

    @staticmethod
    def _problem(reply: Any, need_content: bool) -> str | None:
        """What makes a 200 reply unusable, or None."""
        if not isinstance(reply, dict):
            return "the body is not a JSON object"
        choices = reply.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return "the reply has no choices"
        message = choices[0].get("message")
        if not isinstance(message, dict):
            return "the reply's first choice has no message"
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            return f"the reply's content is not text ({type(content).__name__})"
        if need_content and not (content or "").strip():
            return "the reply's content is empty"
        return _logprobs_problem(choices[0].get("logprobs"))

    def _post(self, body: dict[str, Any], *, need_content: bool = False) -> tuple[dict[str, Any], str | None]:
        """The endpoint's reply, retried as the class says. Returns (reply, None), or — when the only fault
        left after every retry is empty content — (last reply, why), which callers turn into an uncached
        abstention. Anything else that never succeeds raises :class:`BackendError`."""
        import requests

        headers = {"Content-Type": "application/json"}
        secrets = self._secrets()
        if secrets:
            headers["Authorization"] = f"Bearer {secrets[0]}"
        started = time.monotonic()
        last, empty_reply, sent = "no attempt made", None, 0
        for attempt in range(self.max_retries + 1):
            remaining = self.deadline_s - (time.monotonic() - started)
            if remaining <= 0:
                break
            self.attempts += 1
            sent += 1
            try:
                response = requests.post(self._url, json=body, headers=headers,
                                         timeout=min(self.timeout_s, remaining), stream=True)
                # The body is read against the call's deadline: a server that trickles bytes cannot hold a
                # call beyond deadline_s (the per-read timeout alone would let it).
                body_bytes = _read_until(response, started + self.deadline_s)
            except (requests.ConnectionError, requests.Timeout) as error:
                last = f"{type(error).__name__}: {error}"
            else:
                text = body_bytes.decode("utf-8", errors="replace")
                if response.status_code == 200:
                    try:
                        reply = json.loads(text)
                    except ValueError:
                        reply, problem = None, f"the body is not JSON ({text[:200]!r})"
                    else:
                        problem = self._problem(reply, need_content)
                    if problem is None:
                        return reply, None
                    if problem == "the reply's content is empty":
                        empty_reply = reply
                    last = f"HTTP 200 but {problem}"
                else:
                    last = f"HTTP {response.status_code}: {text[:300]}"
                    if response.status_code != 429 and response.status_code < 500:
                        raise BackendError(redact(f"{self.endpoint} rejected the request ({last})", secrets))
                    retry_after = response.headers.get("Retry-After")
                    if retry_after and retry_after.isdigit() and attempt < self.max_retries:
                        time.sleep(max(0.0, min(float(retry_after), 60.0, self.deadline_s - (time.monotonic() - started))))
                        continue
            if attempt < self.max_retries:
                time.sleep(max(0.0, min(self.backoff_s * 2 ** attempt, self.deadline_s - (time.monotonic() - started))))
        if empty_reply is not None and last.endswith("content is empty"):
            return empty_reply, f"{self.endpoint} replied with empty content {sent} time(s)"
        elapsed = time.monotonic() - started
        raise BackendError(redact(
            f"{self.endpoint} failed after {sent} attempts in {elapsed:.1f} s (each request waits at most "
            f"timeout_s={self.timeout_s:g} s, a whole call at most deadline_s={self.deadline_s:g} s; both are "
            f"backend options); last error: {last}", secrets))

    def _map(self, function, items: Sequence[Any]) -> list[Any]:
        """``function`` over ``items`` with bounded concurrency; on the first failure the items not yet
        started are cancelled (a dead server must not cost one timeout per prompt) and the error raised."""
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            futures = [pool.submit(function, item) for item in items]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    @staticmethod
    def _usage(reply: dict[str, Any]) -> tuple[int, int]:
        usage = reply.get("usage") or {}
        try:
            return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        except (TypeError, ValueError, AttributeError):
            return 0, 0  # token counts are telemetry only; a server that garbles them loses nothing else

    def generate(self, prompts: Sequence[Messages], *, max_tokens: int = 128, temperature: float = 0.0,
                 n: int = 1, seed: int = 0) -> list[GenerationResult]:
        def one(messages: Messages) -> GenerationResult:
            texts, prompt_tokens, completion_tokens, errors = [], 0, 0, []
            # One request per sample: not every server honours `n`, and per-sample seeds keep samples apart.
            for sample in range(n):
                reply, error = self._post({"model": self.model, "messages": list(map(dict, messages)),
                                           "max_tokens": max_tokens, "temperature": temperature,
                                           "seed": seed + sample}, need_content=True)
                texts.append((reply["choices"][0]["message"].get("content") or "").strip())
                if error:
                    errors.append(error)
                used = self._usage(reply)
                prompt_tokens, completion_tokens = used[0], completion_tokens + used[1]
            return GenerationResult(texts, prompt_tokens, completion_tokens, "; ".join(errors) or None)

        return self._map(one, prompts)

    def label_probs(self, prompts: Sequence[Messages], labels: Sequence[str]) -> list[LabelResult]:
        def one(messages: Messages) -> LabelResult:
            reply, _ = self._post({"model": self.model, "messages": list(map(dict, messages)), "max_tokens": 1,
                                   "temperature": 0.0, "logprobs": True, "top_logprobs": self.top_logprobs,
                                   "seed": 0})
            choice = reply["choices"][0]
            text = (choice.get("message", {}).get("content") or "").strip()
            prompt_tokens, completion_tokens = self._usage(reply)
            content = ((choice.get("logprobs") or {}).get("content") or [])
            if not content or not isinstance(content[0], dict) or not content[0].get("top_logprobs"):
                # This server gives no log-probabilities: fall back to a short generation, parsed
                # (method "generated": one-hot probabilities, flagged by the scores built on them).
                generated = self.generate([messages], max_tokens=8)[0]
                parsed = _parsed_result(generated.texts[0], labels, generated.prompt_tokens,
                                        generated.completion_tokens)
                return replace(parsed, error=generated.error)
            mass = {label: 0.0 for label in labels}
            for candidate in content[0]["top_logprobs"]:
                token = str(candidate.get("token", "")).strip().lower()
                logprob = candidate["logprob"]  # checked by _logprobs_problem: a finite number <= 0
                for label in labels:
                    if token == label.lower():
                        mass[label] += math.exp(logprob)
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
                # An answer with an error (no usable reply this time) is used but never stored: a rerun asks
                # again instead of inheriting a server's glitch as a permanent result.
                self.cache.put_many((keys[i], self.name, operation, asdict(answer))
                                    for i, answer in zip(chunk, answers) if not getattr(answer, "error", None))
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
    """The usual stack: a backend of ``kind`` ("transformers", "llamacpp" or "openai") behind the call cache.

    ``cache`` is True (the default SQLite file), False (no cache) or a path.
    """
    backend: Backend
    if kind == "transformers":
        backend = TransformersBackend(model, adapter=adapter, **options)
    elif kind == "llamacpp":
        backend = LlamaCppBackend(model, adapter=adapter, **options)
    elif kind == "openai":
        if not model or not base_url:
            raise ValueError("an OpenAI-compatible backend needs model= and base_url=")
        backend = OpenAICompatibleBackend(model, base_url, **options)
    else:
        raise ValueError(f"unknown backend kind {kind!r} (transformers, llamacpp or openai)")
    store = None if cache is False else CallCache(None if cache is True else cache)
    return CachedBackend(backend, store)
