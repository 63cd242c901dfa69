"""The door's wrapper: any backend behind the call cache, with telemetry, and the usual stack builder."""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from evalkit.models.cache import CallCache, CallRecord, Telemetry, call_key
from evalkit.models.base import Backend, GenerationResult, LabelResult, Messages, label_probs_each
from evalkit.models.hf import TransformersBackend
from evalkit.models.llamacpp import LlamaCppBackend
from evalkit.models.openai_compatible import OpenAICompatibleBackend

__all__ = ["CachedBackend", "open_backend"]


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

    def _cached(self, operation: str, prompts: Sequence[Messages], parameters: dict[str, Any] | list[dict[str, Any]],
                call, build):
        """Answers for ``prompts``: from the cache, else ``call(indices)`` on the missing ones. ``parameters`` is
        one dict for every prompt or a list with each prompt's own (part of its key either way)."""
        each = parameters if isinstance(parameters, list) else [parameters] * len(prompts)
        keys = [call_key(self.name, operation, list(map(dict, p)), own) for p, own in zip(prompts, each)]
        found = self.cache.get_many(keys) if self.cache is not None else {}
        # Missing prompts run in chunks, each stored as soon as it is done, so an interrupted run resumes
        # from the last finished chunk; sorting by text keeps prompts that open alike in the same chunk.
        # A prompt asked twice in one call (same key) is computed once; its repeats count as cache hits.
        first: dict[str, int] = {}
        for i, key in enumerate(keys):
            if key not in found:
                first.setdefault(key, i)
        missing = sorted(first.values(), key=lambda i: json.dumps(list(map(dict, prompts[i]))))
        fresh: dict[int, Any] = {}
        elapsed = 0.0
        for start in range(0, len(missing), self.chunk_size):
            chunk = missing[start:start + self.chunk_size]
            started = time.perf_counter()
            answers = call(chunk)
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
            result = fresh[i] if not hit else fresh[first[key]] if key in first else build(found[key])
            results.append(result)
            records.append(CallRecord(self.name, operation, result.prompt_tokens, result.completion_tokens,
                                      0.0 if hit else elapsed / len(missing), hit))
        self.telemetry.add(records)
        return results

    def label_probs(self, prompts: Sequence[Messages], labels: Sequence[str]) -> list[LabelResult]:
        return self._cached("label_probs", prompts, {"labels": list(labels)},
                            lambda chunk: self.backend.label_probs([prompts[i] for i in chunk], labels),
                            lambda v: LabelResult(**v))

    def label_probs_each(self, prompts: Sequence[Messages], labels: Sequence[Sequence[str]]) -> list[LabelResult]:
        """:func:`~evalkit.models.base.label_probs_each` behind the cache: each prompt's key is the one
        :meth:`label_probs` gives it with its labels, so the two calls share their answers."""
        if len(labels) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(labels)} label sets")
        return self._cached("label_probs", prompts, [{"labels": list(own)} for own in labels],
                            lambda chunk: label_probs_each(self.backend, [prompts[i] for i in chunk],
                                                           [labels[i] for i in chunk]),
                            lambda v: LabelResult(**v))

    def generate(self, prompts: Sequence[Messages], *, max_tokens: int = 128, temperature: float = 0.0,
                 n: int = 1, seed: int = 0) -> list[GenerationResult]:
        parameters = {"max_tokens": max_tokens, "temperature": temperature, "n": n, "seed": seed}
        key = dict(parameters)
        if temperature > 0 and getattr(self.backend, "sampling_scheme", None):
            key["sampling"] = self.backend.sampling_scheme  # a new way of drawing is not answered by the old's
        return self._cached("generate", prompts, key,
                            lambda chunk: self.backend.generate([prompts[i] for i in chunk], **parameters),
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
