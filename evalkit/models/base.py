"""What every backend shares: the protocol, the result types, the error, and label parsing."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence, runtime_checkable

from evalkit.models.redaction import redact

__all__ = ["Messages", "LabelResult", "GenerationResult", "Backend", "BackendError", "BackendConfigError",
           "ParsedVerdicts", "warn_if_parsed", "parse_label", "one_hot", "label_probs_each"]

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
    """A model endpoint failed for good (after its retries).

    The message is redacted when the error is built (:func:`~evalkit.models.redact`, with the ``secrets``
    given), and ``cause`` holds the redacted text of the last underlying failure: backends raise it ``from
    None``, so no raw library exception (whose text may carry a credential) travels with it.

    >>> error = BackendError("http://me:pw-123456@h/v1?sig=abc failed", secrets=["pw-123456"], cause="HTTP 503")
    >>> str(error), error.cause
    ('http://***@h/v1?sig=*** failed', 'HTTP 503')
    """

    def __init__(self, message: str, *, secrets: Sequence[str] = (), cause: str | None = None):
        super().__init__(redact(str(message), secrets))
        self.cause = None if cause is None else redact(cause, secrets)


class BackendConfigError(BackendError, ValueError):
    """A backend that cannot work as configured (a malformed ``base_url``, conflicting credentials)."""


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


def label_probs_each(backend: Backend, prompts: Sequence[Messages],
                     labels: Sequence[Sequence[str]]) -> list[LabelResult]:
    """:meth:`Backend.label_probs` with each prompt's own labels (``labels[i]`` for ``prompts[i]``), so that
    several judges' prompts about one item go to the model in one call. A backend with a ``label_probs_each``
    method of its own gets all prompts at once — the transformers engine (one prompt at a time, its CPU
    default) and llama.cpp share key/value prefixes, so a prompt that repeats an item's text is computed on top
    of the other's cache; any other backend gets one ``label_probs`` call per distinct label set. Results come back in the prompts' order.

    >>> class Echo:
    ...     name = "echo"
    ...     def label_probs(self, prompts, labels):
    ...         return [LabelResult({l: 1 / len(labels) for l in labels}, p, "logprobs", 1.0) for p in prompts]
    >>> [sorted(r.probs) for r in label_probs_each(Echo(), ["a", "b", "c"], [["Yes", "No"], ["1", "2"], ["Yes", "No"]])]
    [['No', 'Yes'], ['1', '2'], ['No', 'Yes']]
    """
    if len(labels) != len(prompts):
        raise ValueError(f"{len(prompts)} prompts but {len(labels)} label sets")
    own = getattr(backend, "label_probs_each", None)
    if own is not None:
        return own(prompts, labels)
    groups: dict[tuple[str, ...], list[int]] = {}
    for index, label_set in enumerate(labels):
        groups.setdefault(tuple(label_set), []).append(index)
    results: list[LabelResult | None] = [None] * len(prompts)
    for label_set, indices in groups.items():
        for index, result in zip(indices, backend.label_probs([prompts[i] for i in indices], list(label_set))):
            results[index] = result
    return results  # type: ignore[return-value]


def parse_label(text: str, labels: Sequence[str]) -> str | None:
    """The first label that appears in ``text`` as a whole word (case-insensitive), or None.

    >>> parse_label("Yes. The two replies match.", ["Yes", "No"])
    'Yes'
    >>> parse_label("Score: 4 because ...", ["1", "2", "3", "4", "5"])
    '4'
    >>> parse_label("I cannot tell.", ["Yes", "No"]) is None
    True
    """
    import re

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


def _reusable_prefix(held: Sequence[int], ids: Sequence[int]) -> int:
    """How many leading tokens of the prompt ``ids`` a local backend may take from its key/value cache of
    ``held`` (the tokens it computed last): their common prefix, leaving at least one token of ``ids`` to run,
    which gives the next-token logits.

    >>> _reusable_prefix([1, 2, 3, 9], [1, 2, 3, 4, 5]), _reusable_prefix([1, 2, 3], [1, 2, 3])
    (3, 2)
    """
    shared = 0
    for held_token, token in zip(held, ids):
        if held_token != token:
            break
        shared += 1
    return min(shared, len(ids) - 1)
