"""The llama.cpp engine: a GGUF model run in-process by ``llama-cpp-python`` (opt-in: ``make llamacpp``)."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

from evalkit.models.gguf_weights import GGUF_TYPES
from evalkit.models.base import GenerationResult, LabelResult, Messages, _reusable_prefix
from evalkit.models.hf import TransformersBackend, _folder_fingerprint, _label_result

__all__ = ["LlamaCppBackend"]


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
    from evalkit.models.defaults import cache_dir, smollm2_gguf_file
    from evalkit.models.gguf_weights import lora_deltas, rewrite_gguf

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


def default_threads(environ: Mapping[str, str] = os.environ) -> int:
    """The threads llama.cpp computes with unless told: ``OMP_NUM_THREADS`` where it is set to a count (the
    setting torch and the BLAS libraries also follow, so a process given one core's share keeps to it), else
    every core this process may run on.

    >>> default_threads({"OMP_NUM_THREADS": "1"})
    1
    >>> default_threads({"OMP_NUM_THREADS": "many"}) == default_threads({})  # not a count: the cores
    True
    """
    given = environ.get("OMP_NUM_THREADS", "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class LlamaCppBackend:
    """A GGUF model run in-process by llama.cpp (``llama-cpp-python``), the second local engine.

    ``model`` is a GGUF file, used as it is unless ``weights`` says otherwise; None means the default SmolLM2,
    whose shipped GGUF (Q4_1) is rewritten once into ``weights`` (``f16`` by default; ``f32``, ``q8_0``, or
    ``shipped`` for the file as it is; see :mod:`evalkit.models.gguf_weights`): llama.cpp has no fast x86 kernel for Q4_1 and multiplies it with 8-bit
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

    # What a spec's value of an option must be beyond its type (see evalkit.models.options).
    option_checks: ClassVar[dict[str, dict[str, Any]]] = {
        "weights": {"choices": (*GGUF_TYPES, "shipped")}, "threads": {"minimum": 1}, "context": {"minimum": 64},
        "min_shared_prefix": {"minimum": 1}}

    def __init__(self, model: str | Path | None = None, *, adapter: str | Path | None = None,
                 weights: str | None = None, tokenizer: str | Path | None = None, threads: int | None = None,
                 context: int = 8192, share_prefixes: bool = False, min_shared_prefix: int = 8):
        try:
            from llama_cpp import Llama
        except ImportError as error:
            raise ImportError("the llamacpp engine is opt-in and llama-cpp-python is not installed here: build "
                              "it once with `make llamacpp` (minutes: it compiles llama.cpp; see "
                              "docs/DEVELOPMENT.md, 'Set-up')") from error
        from transformers import AutoTokenizer

        from evalkit.models.defaults import default_lm_path, quiet_model_loading

        quiet_model_loading()
        gguf = _engine_gguf(model, weights, adapter)
        if tokenizer is not None:
            self.tokenizer = AutoTokenizer.from_pretrained(str(tokenizer))
        elif model is None:
            self.tokenizer = AutoTokenizer.from_pretrained(str(default_lm_path()))
        else:
            self.tokenizer = AutoTokenizer.from_pretrained(str(Path(model).parent), gguf_file=Path(model).name)
        if threads is None:  # llama-cpp-python's own default is half the cores
            threads = default_threads()
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
        shared = _reusable_prefix(list(self.llm.input_ids[:self.llm.n_tokens]), ids)
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
        return self.label_probs_each(prompts, [labels] * len(prompts))

    def label_probs_each(self, prompts: Sequence[Messages], labels: Sequence[Sequence[str]]) -> list[LabelResult]:
        """Label probabilities with each prompt's own labels, in one pass (several judges' prompts about an
        item follow each other and share its text in the key/value cache)."""
        import numpy as np

        token_ids = {label_set: self.label_token_ids(label_set) for label_set in {tuple(l) for l in labels}}
        encoded = self._encode(prompts)
        results: list[LabelResult | None] = [None] * len(prompts)
        for index in sorted(range(len(encoded)), key=lambda i: encoded[i]):  # alike prompts in a row
            self._prefill(encoded[index])
            logits = self._last_logits()
            probabilities = np.exp(logits - logits.max())
            probabilities /= probabilities.sum()
            results[index] = _label_result(probabilities, token_ids[tuple(labels[index])], self.tokenizer,
                                           len(encoded[index]))
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
