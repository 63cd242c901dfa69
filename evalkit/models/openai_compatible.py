"""The OpenAI-compatible HTTP backend: chat completions from vLLM, Ollama, a llama.cpp server or OpenAI."""
from __future__ import annotations

import json
import logging
import threading
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Sequence
from urllib.parse import urlsplit, urlunsplit

from evalkit.models.base import BackendConfigError, BackendError, GenerationResult, LabelResult, Messages, _parsed_result
from evalkit.models.redaction import (_basic_value, configured_secrets, environment_secrets, mask_echoes,
                                     masked_parts, path_secrets, redact, url_credentials)
from evalkit.models.cache import keyed_digest
from evalkit.models.retry import RetryPolicy

__all__ = ["OpenAICompatibleBackend", "DEFAULT_API_KEY_ENV"]

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
_EMPTY = "the reply's content is empty"


def _chat_url(base_url: str) -> str:
    """``<base_url>/chat/completions``, a query string in ``base_url`` kept after the path.

    >>> _chat_url("https://h/v1/?api-version=2024-06-01")
    'https://h/v1/chat/completions?api-version=2024-06-01'
    """
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))


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


def _sendable(url: str, shown: str) -> str:
    """``url`` without its user-info (credentials travel in a header), once it is checked to be usable: http
    or https, a host, a port from 1 to 65535. Raises :class:`BackendConfigError` naming ``shown`` (the
    redacted URL), never the parser's own text."""
    try:
        parts = urlsplit(url)
        reason = ("the scheme must be http or https" if parts.scheme.lower() not in ("http", "https")
                  else "it names no host" if not parts.hostname
                  # u:p@ss/w0rd@host: a parser takes "ss" for the host and would send part of the password there
                  else "its user-info and its path both hold an '@', so where the host starts cannot be told: "
                       "percent-encode '@' and '/' in a user name or password (%40, %2F)"
                  if "@" in parts.netloc and "@" in parts.path else None)
        if reason is None and parts.port is not None and not 0 < parts.port < 65536:
            reason = "its port must be a number from 1 to 65535"
    except ValueError:
        reason = "it is not a well-formed URL (is the port a number from 1 to 65535?)"
    if reason is not None:
        raise BackendConfigError(f"base_url {shown!r} cannot be used: {reason}") from None
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _policy(retry: RetryPolicy | None, **options: Any) -> RetryPolicy:
    """``retry``, or the policy the separate keyword options make (both given and different: an error)."""
    if retry is None:
        return RetryPolicy(**options)
    changed = [name for name, value in options.items() if value != getattr(RetryPolicy, name)]
    if changed:
        raise ValueError(f"give retry= or {', '.join(changed)}, not both")
    return retry


class _RedactingFilter(logging.Filter):
    """Masks what urllib3 logs at DEBUG level (the request line carries the URL's query values)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage(), environment_secrets()), ()
        return True


logging.getLogger("urllib3.connectionpool").addFilter(_RedactingFilter())


def credentials_conflict(base_url: str, api_key_env: str | None) -> str | None:
    """Why one request could not carry both: ``base_url``'s user-info (sent as HTTP Basic) and an API key
    in ``$api_key_env`` (sent as a key header) — or None when there is no such conflict in this environment.

    >>> import os
    >>> os.environ["EVALKIT_DOCTEST_KEY"] = "k"
    >>> credentials_conflict("https://u:p@host/v1", "EVALKIT_DOCTEST_KEY")[:36]
    'base_url carries credentials (HTTP B'
    >>> credentials_conflict("https://host/v1", "EVALKIT_DOCTEST_KEY"), credentials_conflict("https://u:p@h/v1", None)
    (None, None)
    >>> del os.environ["EVALKIT_DOCTEST_KEY"]
    """
    from urllib.parse import urlsplit

    if urlsplit(base_url.strip()).password is None or not api_key_env or not os.environ.get(api_key_env):
        return None
    return (f"base_url carries credentials (HTTP Basic) and ${api_key_env} holds an API key; a request has one "
            "Authorization header: remove the credentials, or set api_key_env to null (options: {api_key_env: "
            "null}) to use them")


_MOST_TOKENS = 10**8  # more tokens than any model's context holds: a count past it is garbled


class OpenAICompatibleBackend:
    """Chat completions over HTTP (vLLM, Ollama, llama.cpp server, OpenAI).

    Requests run with at most ``max_concurrency`` in flight, under a :class:`RetryPolicy` (``retry``, or
    built from ``max_retries``, ``backoff_s``, ``timeout_s`` and ``deadline_s``): a 429, a 5xx, a timeout, a
    stalled, dropped or reset connection (while connecting, in the headers or in the body) or a malformed
    200 reply (not JSON, no ``choices``, empty content) is retried with exponential backoff; one call — a
    chat completion and its retries — is held to ``deadline_s`` of wall-clock time, then
    :class:`BackendError` names the endpoint, the time spent and the last failure. When one prompt of a
    batch fails for good, the prompts not yet sent are cancelled.

    Credentials: the API key is read from the environment variable ``api_key_env`` at call time and sent
    as ``Authorization: Bearer``; it is never stored, logged or part of a cache key. Credentials written
    into ``base_url`` (``https://user:password@host/v1``) are sent as HTTP Basic auth when no API key is
    set. Both at once is refused with :class:`BackendConfigError` (one request has one ``Authorization``
    header; the key is never silently replaced): remove them from the URL or pass ``api_key_env=None``.
    Every message, the backend's ``name`` and its ``endpoint`` pass :func:`~evalkit.models.redact` with the
    configured secrets; every failure leaves as a :class:`BackendError` raised ``from None``.
    """

    def __init__(self, model: str, base_url: str, *, api_key_env: str | None = DEFAULT_API_KEY_ENV,
                 max_concurrency: int = 4, max_retries: int = RetryPolicy.max_retries,
                 backoff_s: float = RetryPolicy.backoff_s, timeout_s: float = RetryPolicy.timeout_s,
                 deadline_s: float = RetryPolicy.deadline_s, top_logprobs: int = 20,
                 retry: RetryPolicy | None = None):
        self.retry = _policy(retry, max_retries=max_retries, backoff_s=backoff_s, timeout_s=timeout_s,
                             deadline_s=deadline_s)
        self.model, self._base_url = model, base_url.rstrip("/")
        self._url_secrets = configured_secrets(base_url)
        # The name (and so every cache key) depends on the URL alone, masked: the same in every process (query
        # values are masked by their place; as secrets, they would also mask their text elsewhere in the URL).
        self.base_url = redact(self._base_url, configured_secrets(base_url, query=False))
        try:
            self._url = _chat_url(base_url)
        except ValueError:  # refused just below, with a message of our own
            self._url = base_url
        self._send_url = _sendable(self._url, self.base_url)
        self._credentials = url_credentials(base_url)
        self.api_key_env = api_key_env
        self.max_concurrency = max_concurrency
        self.top_logprobs = top_logprobs
        # Masking maps different query values (?deployment=alpha / beta), or keys in the path, to one text: a
        # short keyed digest of the query and the path's keys as given keeps their cache keys apart (user-info is left
        # out: a changed password is the same server; URLs without either keep their names).
        # A model named by a value copied from the environment's credentials is masked in the name; its digest
        # keeps it apart from other models.
        environment = environment_secrets()
        # whole, escaped or a cut piece of one, or of the URL's own credentials (a password pasted into the name), and
        # a key's known shape (the name is the call cache's backend column; a reply echoing the name is masked too)
        shown_model = redact(model, [*environment, *self._url_secrets])
        self._masked_model = ([] if shown_model == model else [model] if len(model) > 1000
                              else masked_parts(model, shown_model))
        apart = urlsplit(self._base_url).query + "".join(f"/{key}" for key in path_secrets(self._base_url))
        apart += f"\x00{model}" if shown_model != model else ""
        # ... and so is a URL holding one (a token from the environment pasted into the path, in no key's shape)
        shown_url = mask_echoes(self.base_url, environment)
        apart += f"\x00{self._base_url}" if shown_url != self.base_url else ""
        self.base_url = shown_url
        masked_apart = "#" + keyed_digest(apart) if apart else ""  # keyed: no test of a guessed query secret
        self.name = f"openai:{self.base_url}{masked_apart}:{shown_model}"
        self.attempts = 0  # requests sent, retries included (for tests and telemetry)
        self._authorization(self._api_key())  # a conflict of credentials is refused now, not at the first call

    max_retries, backoff_s = property(lambda self: self.retry.max_retries), property(lambda self: self.retry.backoff_s)
    timeout_s, deadline_s = property(lambda self: self.retry.timeout_s), property(lambda self: self.retry.deadline_s)

    def __repr__(self) -> str:
        return f"OpenAICompatibleBackend({self.name!r})"

    @property
    def endpoint(self) -> str:
        """The chat-completions URL as shown in messages (credentials and query values masked)."""
        return redact(self._url, self._url_secrets)

    def _api_key(self) -> str | None:
        return (os.environ.get(self.api_key_env) or None) if self.api_key_env else None

    def _secrets(self) -> list[str]:
        """What this backend masks in every message it builds: its own credentials, the environment's and a model
        name holding either or a key's shape (an endpoint may echo any of them in a reply or an error body)."""
        return [*configured_secrets(self._base_url, self.api_key_env), *environment_secrets(), *self._masked_model]

    def _without_secrets(self, text: str) -> str:
        """A reply's text with the credentials it echoes masked, whole or cut (:func:`mask_echoes`): this
        backend's and the environment's. The text is stored in the call cache and shown in cards and reports."""
        return mask_echoes(text, self._secrets())

    def _authorization(self, key: str | None) -> str | None:
        """The ``Authorization`` header value: the API key as a Bearer token, else the URL's credentials."""
        if key and self._credentials is not None:
            raise BackendConfigError(
                f"{self.endpoint}: base_url carries credentials (sent as HTTP Basic auth) and ${self.api_key_env} "
                "holds an API key (sent as a Bearer token), but a request has one Authorization header: remove "
                "the credentials from base_url, or set api_key_env=None (in a job file, options: {api_key_env: "
                "null}) to use them", secrets=self._secrets())
        if key:
            return f"Bearer {key}"
        return None if self._credentials is None else "Basic " + _basic_value(*self._credentials)

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
            return _EMPTY
        return _logprobs_problem(choices[0].get("logprobs"))

    def _post(self, body: dict[str, Any], *, need_content: bool = False) -> tuple[dict[str, Any], str | None]:
        """The endpoint's reply, retried as the class says. Returns (reply, None), or — when the only fault
        left after every retry is empty content — (last reply, why), which callers turn into an uncached
        abstention. Anything else that never succeeds raises :class:`BackendError` (redacted, ``from
        None``): no other exception leaves this method."""
        secrets = self._secrets()
        try:
            return self._post_retried(body, need_content, secrets)
        except BackendError:
            raise
        except Exception as error:  # noqa: BLE001 — unforeseen: named, redacted, never chained
            failure = redact(f"{type(error).__name__}: {error}", secrets)
        raise BackendError(f"{self.endpoint} failed: {failure}", secrets=secrets, cause=failure) from None

    def _post_retried(self, body: dict[str, Any], need_content: bool,
                      secrets: list[str]) -> tuple[dict[str, Any], str | None]:
        from evalkit.models import transport

        authorization = self._authorization(self._api_key())
        policy = self.retry
        started = time.monotonic()
        deadline = started + policy.deadline_s
        last, empty_reply, sent = "no attempt made", None, 0
        for attempt in range(policy.attempts):
            if deadline - time.monotonic() <= 0:
                break
            self.attempts += 1
            sent += 1
            wait = policy.backoff(attempt)
            outcome = transport.post_json(self._send_url, body, headers={"Content-Type": "application/json"},
                                          authorization=authorization, timeout_s=policy.timeout_s,
                                          deadline=deadline)
            if isinstance(outcome, transport.Failure):
                last = redact(outcome.message, secrets)
                if not outcome.retryable:
                    raise BackendError(f"{self.endpoint}: the request could not be sent ({last})", secrets=secrets,
                                       cause=last)
            elif outcome.status == 200:
                text = outcome.body.decode("utf-8", errors="replace")
                try:
                    reply = json.loads(text)
                except ValueError:
                    # Redacted before it is cut: a cut can then never leave part of a secret behind.
                    reply, problem = None, f"the body is not JSON ({redact(text, secrets)[:200]!r})"
                else:
                    problem = self._problem(reply, need_content)
                if problem is None:
                    return reply, None
                if problem == _EMPTY:
                    empty_reply = reply
                last = f"HTTP 200 but {problem}"
            else:
                text = redact(outcome.body.decode("utf-8", errors="replace"), secrets)
                last = f"HTTP {outcome.status}: {text[:300]}"
                if outcome.status != 429 and outcome.status < 500:
                    raise BackendError(f"{self.endpoint} rejected the request ({last})", secrets=secrets, cause=last)
                retry_after = str(outcome.headers.get("Retry-After") or "")
                if retry_after.isdigit():
                    wait = min(float(retry_after), policy.max_retry_after_s)
            if attempt < policy.max_retries:
                time.sleep(max(0.0, min(wait, deadline - time.monotonic())))
        if empty_reply is not None and last.endswith("content is empty"):
            return empty_reply, f"{self.endpoint} replied with empty content {sent} time(s)"
        elapsed = time.monotonic() - started
        raise BackendError(
            f"{self.endpoint} failed after {sent} attempts in {elapsed:.1f} s (each request waits at most "
            f"timeout_s={policy.timeout_s:g} s, a whole call at most deadline_s={policy.deadline_s:g} s; both are "
            f"backend options); last error: {last}", secrets=secrets, cause=last)

    def _map(self, function, items: Sequence[Any]) -> list[Any]:
        """``function`` over ``items`` with bounded concurrency; on the first failure the items not yet
        started are cancelled (a dead server must not cost one timeout per prompt) and the error raised."""
        failed = threading.Event()

        def guarded(item):
            # A worker that saw a failure must not start the next queued item: leaving the pool waits for it,
            # and it would run to a deadline of its own (a batch took twice its deadline before this).
            if failed.is_set():
                raise BackendError(f"{self.endpoint}: cancelled after an earlier request of the batch failed")
            try:
                return function(item)
            except BaseException:
                failed.set()
                raise

        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            futures = [pool.submit(guarded, item) for item in items]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    @staticmethod
    def _usage(reply: dict[str, Any]) -> tuple[int, int]:
        """The reply's prompt and completion token counts; (0, 0) for counts that are missing, garbled, negative or
        past any context window (token counts are telemetry only: a server that garbles them loses nothing else).

        >>> OpenAICompatibleBackend._usage({"usage": {"prompt_tokens": 12, "completion_tokens": 3}})
        (12, 3)
        >>> OpenAICompatibleBackend._usage({"usage": {"prompt_tokens": 10**30, "completion_tokens": -5}})
        (0, 0)
        """
        usage = reply.get("usage") or {}
        try:
            counts = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        except (TypeError, ValueError, AttributeError, OverflowError):
            return 0, 0
        return counts if all(0 <= count <= _MOST_TOKENS for count in counts) else (0, 0)

    def generate(self, prompts: Sequence[Messages], *, max_tokens: int = 128, temperature: float = 0.0,
                 n: int = 1, seed: int = 0) -> list[GenerationResult]:
        def one(messages: Messages) -> GenerationResult:
            texts, prompt_tokens, completion_tokens, errors = [], 0, 0, []
            # One request per sample: not every server honours `n`, and per-sample seeds keep samples apart.
            for sample in range(n):
                reply, error = self._post({"model": self.model, "messages": list(map(dict, messages)),
                                           "max_tokens": max_tokens, "temperature": temperature,
                                           "seed": seed + sample}, need_content=True)
                texts.append(self._without_secrets((reply["choices"][0]["message"].get("content") or "").strip()))
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
            text = self._without_secrets((choice.get("message", {}).get("content") or "").strip())
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
