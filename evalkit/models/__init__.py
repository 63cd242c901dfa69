"""The model door: one small protocol through which every language-model call of the kit goes.

Two operations, both batched:

* :meth:`Backend.label_probs` — for each prompt (chat messages), the probability of each label word
  ("Yes"/"No", "A"/"B", "1".."5") as the model's next token, normalised over the labels;
* :meth:`Backend.generate` — text for each prompt, with max tokens, temperature, n samples and a seed.

:func:`label_probs_each` asks ``label_probs`` with each prompt's own labels (several judges about the same
items in one call). The cache, the transformers engine and llama.cpp offer it natively (the engines
then compute an item's shared text once); any other backend gets one ``label_probs`` call per label set.

Implementations, one module each: :class:`TransformersBackend` (:mod:`.hf`: any local folder or Hugging
Face id; the default is the converted SmolLM2-135M-Instruct), :class:`LlamaCppBackend` (:mod:`.llamacpp`,
opt-in: ``make llamacpp``) and :class:`OpenAICompatibleBackend` (:mod:`.openai_compatible`: vLLM, Ollama,
llama.cpp server, OpenAI; its tries and time bounds are a :class:`RetryPolicy`). :class:`CachedBackend`
(:mod:`.cached`) wraps any of them with the call cache and telemetry; :func:`open_backend` builds the usual
stack from a few settings. Where torch runs, and in which precision, is one setting for every local model
(:mod:`.device`: :func:`resolve_device`, :func:`resolve_dtype`, :class:`Placement`). Every string that leaves
the door passes :func:`redact` (:mod:`.redaction`; the shapes of keys it knows by sight, and keys in a URL's
path, are :mod:`.key_shapes`).
"""
from __future__ import annotations

# Private names are re-exported too: other modules of the kit (and users' code) import them from here.
from evalkit.models.base import (Backend, BackendConfigError, BackendError, GenerationResult, LabelResult, Messages,
                   ParsedVerdicts, _parsed_result, label_probs_each, one_hot, parse_label, warn_if_parsed)
from evalkit.models.cached import CachedBackend, open_backend
from evalkit.models.device import Placement, resolve_device, resolve_dtype
from evalkit.models.hf import TransformersBackend, _folder_fingerprint, _label_result
from evalkit.models.llamacpp import _REWRITE_VERSION, LlamaCppBackend, _engine_gguf, _file_identity
from evalkit.models.openai_compatible import DEFAULT_API_KEY_ENV, OpenAICompatibleBackend, _chat_url, _logprobs_problem
from evalkit.models.redaction import configured_secrets, endpoint_label, environment_secrets, public_endpoint, redact
from evalkit.models.retry import RetryPolicy

__all__ = ["Messages", "LabelResult", "GenerationResult", "Backend", "BackendError", "BackendConfigError",
           "TransformersBackend", "LlamaCppBackend", "OpenAICompatibleBackend", "RetryPolicy", "CachedBackend",
           "open_backend", "parse_label", "one_hot", "redact", "configured_secrets", "environment_secrets",
           "public_endpoint", "endpoint_label", "DEFAULT_API_KEY_ENV",
           "ParsedVerdicts", "warn_if_parsed", "label_probs_each", "resolve_device", "resolve_dtype", "Placement"]
