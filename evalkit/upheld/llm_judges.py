"""LLM-as-a-judge metrics for UPHELD (paper App. F and B.3), written in our own words.

Every judge sees the same inputs as the paper's — the conversation so far, the human reference and the
candidate — and answers on the same scale and in the same format:

=========================  ==========================================  ===========  ==============
judge                      question                                    labels       how scored
=========================  ==========================================  ===========  ==============
``yes_no``                 same information as the reference?          Yes / No     P(Yes)
``yes_no_explain``         same, with a reason                         Yes / No     parsed, 1 / 0
``likert``                 how much of the reference is conveyed?      1-5          expected value
``likert_explain``         same, with a reason                         1-5          parsed
``instructions_content``   annotators' content task (App. B.2.1)       1-5          expected value
``instructions_style``     annotators' style task (App. B.2.2)         1 / 3 / 5    expected value
``instructions_reasonable``annotators' reasonableness task (B.2.3)     1 / 5        expected value
=========================  ==========================================  ===========  ==============

Where the backend gives next-token probabilities the score is the expected value over the label values;
explanation variants generate text and parse it. Output that cannot be parsed is an *abstention*: its score
is missing and its raw text is kept, never replaced by a number.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from evalkit.models import Backend, label_probs_each, one_hot, parse_label
from evalkit.data.dialogue import History, render

__all__ = ["PromptSpec", "JUDGES", "format_history", "judge_messages", "judge", "run_judges", "judge_columns",
           "parse_verdict"]


@dataclass(frozen=True)
class PromptSpec:
    """A judge: its prompt, its labels and their values, and whether it generates or reads probabilities."""

    name: str
    target: str
    template: str
    labels: tuple[str, ...]
    values: tuple[float, ...]
    generates: bool = False
    uses_reference: bool = True

    def value_of(self, label: str) -> float:
        return self.values[self.labels.index(label)]


_SYSTEM = "You are a careful evaluator of dialogue. Follow the output format exactly."

_COMPARE_INTRO = """Below is a conversation, the reply that really came next (the reference), and a predicted reply.

Conversation:
{history}

Reference reply: {reference}
Predicted reply: {candidate}
"""

_YES_NO = _COMPARE_INTRO + """
Given the conversation, does the predicted reply carry the same information as the reference reply?
Answer with a single word: Yes or No."""

_YES_NO_EXPLAIN = _COMPARE_INTRO + """
Given the conversation, does the predicted reply carry the same information as the reference reply?
Write your answer on the first line as "Verdict: Yes" or "Verdict: No", then one line starting with
"Reason:" that says why."""

_LIKERT = _COMPARE_INTRO + """
Rate how much of the reference reply's information the predicted reply conveys, from 1 to 5:
1 = none of it, 5 = the two replies mean the same thing.
Answer with a single integer from 1 to 5."""

_LIKERT_EXPLAIN = _COMPARE_INTRO + """
Rate how closely the predicted reply matches the reference reply as a response, from 1 (not at all) to
5 (equivalent). Write "Score: <1-5>" on the first line, then one line starting with "Reason:" that says why."""

_INSTRUCTIONS_INTRO = """You are annotating a dialogue. You see the conversation so far and two ways to continue
it, Option A and Option B.

Conversation:
{history}

Option A: {reference}
Option B: {candidate}
"""

_INSTRUCTIONS_CONTENT = _INSTRUCTIONS_INTRO + """
Task: is the information in Option B roughly the same as the information in Option A?
Guidance: they are equivalent when B holds everything A says, when either could continue the conversation
without changing where it goes, and when they mean the same thing. If B says all of A but adds more
relevant detail, give at most 3. If B is unreadable or incoherent, give 3. Give a lower score when B adds
details that neither expand on A nor relate to the conversation. Ignore phrases where B says it is an AI.
Scale: 1 = strongly disagree, 2 = disagree, 3 = neutral, 4 = agree, 5 = strongly agree.
Answer with a single integer from 1 to 5."""

_INSTRUCTIONS_STYLE = _INSTRUCTIONS_INTRO + """
Task: do Option A and Option B sound as if the same person wrote them, in the same mood?
Guidance: compare vocabulary, tone, sentiment and sentence structure. A length difference alone does not
make styles different, and different content can still share one style. Use the assistant's voice in the
conversation as a guide.
Scale: 1 = different styles, 3 = somewhat the same style, 5 = the same style.
Answer with a single number: 1, 3 or 5."""

_INSTRUCTIONS_REASONABLE = """You are annotating a dialogue. You see the conversation so far and one proposed next
reply.

Conversation:
{history}

Proposed reply: {candidate}

Task: is the proposed reply a reasonable way to continue this conversation?
Guidance: judge it on its own — it may differ from what was really said and still be reasonable if it is on
topic. If it is cut short, judge the part you have. It is not reasonable if it is unreadable or incoherent,
off topic, far too wordy, rude, in an inappropriate tone, or adds nothing and asks for nothing useful.
Mentioning that it is an AI does not by itself make it unreasonable.
Scale: 1 = not a reasonable continuation, 5 = a reasonable continuation.
Answer with a single number: 1 or 5."""

_LIKERT_LABELS = ("1", "2", "3", "4", "5")
JUDGES: dict[str, PromptSpec] = {spec.name: spec for spec in (
    PromptSpec("yes_no", "content", _YES_NO, ("Yes", "No"), (1.0, 0.0)),
    PromptSpec("yes_no_explain", "content", _YES_NO_EXPLAIN, ("Yes", "No"), (1.0, 0.0), generates=True),
    PromptSpec("likert", "content", _LIKERT, _LIKERT_LABELS, (1, 2, 3, 4, 5)),
    PromptSpec("likert_explain", "content", _LIKERT_EXPLAIN, _LIKERT_LABELS, (1, 2, 3, 4, 5), generates=True),
    PromptSpec("instructions_content", "content", _INSTRUCTIONS_CONTENT, _LIKERT_LABELS, (1, 2, 3, 4, 5)),
    PromptSpec("instructions_style", "style", _INSTRUCTIONS_STYLE, ("1", "3", "5"), (1, 3, 5)),
    PromptSpec("instructions_reasonable", "reasonable", _INSTRUCTIONS_REASONABLE, ("1", "5"), (1, 5),
              uses_reference=False),
)}


def format_history(history: History) -> str:
    """Turns as ``speaker: text`` lines.

    >>> format_history([("user", "Hi"), ("assistant", "Hello!")])
    'user: Hi\\nassistant: Hello!'
    >>> format_history([])
    '(the conversation starts here)'
    """
    return render(history, empty="(the conversation starts here)")


def judge_messages(spec: PromptSpec, history: History, reference: str,
                   candidate: str) -> list[dict[str, str]]:
    """The chat messages a judge sends for one item."""
    prompt = spec.template.format(history=format_history(history), reference=reference, candidate=candidate)
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}]


_VERDICT = re.compile(r"(?:verdict|score|answer|rating)\s*[:=]\s*\**\s*(\w+)", re.IGNORECASE)
# Numbers that state the scale, not an answer: a range ("1 to 5", "1-5", "1 (poor) to 5") and a total ("out
# of 5", "/5", "scale of 5"); anchors ("1 = poor", "5 means") when two or more restate the scale's ends.
_SCALE = re.compile(r"\b\d+\s*(?:\([^)]*\)\s*)?(?:to|through|-|–|—)\s*\d+\b"
                    r"|(?:out\s+of|scale\s+of|/)\s*\d+\b", re.IGNORECASE)
_ANCHOR = re.compile(r"\b\d+\s*(?:=|means\b)", re.IGNORECASE)
# A refusal: the judge declines to rate, or says it cannot.
_REFUSAL = re.compile(
    r"\bI\s*(?:must\s+|have\s+to\s+|'ll\s+|will\s+)?(?:refuse|decline)"
    r"|\b(?:I\s*(?:can\s*not|can't|cannot|won't|will\s+not|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable)"
    r"|do\s+not|don't|would\s+rather\s+not)|unable|not\s+(?:able|possible))\s+(?:to\s+)?(?:\w+\s+){0,2}?"
    r"(?:rate|score|say|judge|grade|evaluate|assess|determine|decide|answer|give|provide|assign|comply)\b"
    r"|\bno\s+(?:score|rating|verdict|answer)\b|\bN/A\b|\bcannot\s+be\s+(?:rated|scored|judged|determined)",
    re.IGNORECASE)


def parse_verdict(text: str, labels: Sequence[str]) -> str | None:
    """The label a generated answer gives, or None (an abstention): the word after 'Verdict:'/'Score:'/
    'Answer:'/'Rating:' when present; else None when the answer refuses ("I refuse", "I cannot say", "I will
    not rate", "no score", "N/A"); else its first label word. Numbers that only state the scale are set aside
    first ("on a 1 to 5 scale", "1-5", "out of 5", "4/5" keeps its 4; "1 = poor ... 5 = excellent").

    >>> parse_verdict("Verdict: No\\nReason: the prediction adds a price.", ["Yes", "No"])
    'No'
    >>> parse_verdict("Reason: close match.\\nScore: 4", ["1", "2", "3", "4", "5"])
    '4'
    >>> parse_verdict("I think yes.", ["Yes", "No"])
    'Yes'
    >>> parse_verdict("Score: 7", ["1", "2", "3", "4", "5"]) is None
    True
    >>> [parse_verdict(t, ["1", "2", "3", "4", "5"]) for t in ("4", "Score: 4/5", "I'd give it a 4.",
    ...     "On a 1 to 5 scale, I'd give it a 4.", "4 out of 5", "Rating (1-5): 2")]
    ['4', '4', '4', '4', '4', '2']
    >>> [parse_verdict(t, ["1", "2", "3", "4", "5"]) for t in ("I refuse; on a 1 to 5 scale I cannot say.",
    ...     "I will not rate this reply.", "The scale is 1-5.", "Out of 5? I can't judge this.", "N/A")]
    [None, None, None, None, None]
    """
    answer = _SCALE.sub(" ", text)
    if len(_ANCHOR.findall(answer)) >= 2:
        answer = _ANCHOR.sub(" ", answer)
    match = _VERDICT.search(answer)
    if match:
        return parse_label(match.group(1), labels)
    if _REFUSAL.search(text):
        return None
    return parse_label(answer, labels)


def _prompts(items: pd.DataFrame, spec: PromptSpec) -> list[list[dict[str, str]]]:
    return [judge_messages(spec, h, r, c) for h, r, c in zip(items["history"], items["reference"], items["candidate"])]


def _frame(spec: PromptSpec, rows: list[tuple]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["item_id", "score", "method", "probs", "raw_text"])
    frame.insert(1, "judge", spec.name)
    frame.insert(2, "target", spec.target)
    frame.insert(4, "status", frame["score"].isna().map({True: "abstain", False: "ok"}))
    frame["score"] = frame["score"].astype(float)
    return frame


def _probability_rows(spec: PromptSpec, item_ids, results) -> list[tuple]:
    rows = []
    for item_id, result in zip(item_ids, results):
        probs = result.probs
        if result.method == "generated":  # a backend without probabilities parsed a reply: parsed as a verdict
            probs = one_hot(parse_verdict(result.text, spec.labels), spec.labels)
        score = None
        if probs is not None:
            score = sum(probs[label] * spec.value_of(label) for label in spec.labels)
        rows.append((item_id, score, result.method, probs, result.text))
    return rows


def judge(items: pd.DataFrame, name: str | PromptSpec, backend: Backend, *, max_tokens: int = 96) -> pd.DataFrame:
    """Run judge ``name`` (a name in :data:`JUDGES`, or a :class:`PromptSpec` of one's own: a judge is a file,
    not an edit) over ``items`` (columns ``item_id``, ``history``, ``reference``, ``candidate``).

    Returns one row per item: ``item_id``, ``judge``, ``target``, ``score`` (missing for an abstention),
    ``status`` ("ok" or "abstain"), ``method`` ("logprobs" or "generated"), ``probs`` (label → probability,
    or None) and ``raw_text`` (what the model said).
    """
    return run_judges(items, [name], backend, max_tokens=max_tokens)[0]


def run_judges(items: pd.DataFrame, names: Sequence[str | PromptSpec], backend: Backend, *,
               max_tokens: int = 96) -> list[pd.DataFrame]:
    """:func:`judge` for several judges over the same items, one frame each. The judges that read label
    probabilities send their prompts in one call (:func:`~evalkit.models.label_probs_each`): their prompts
    about an item share its conversation, reference and candidate, so a backend that shares prefixes
    (:class:`~evalkit.models.TransformersBackend` at batch size 1, the CPU default; llama.cpp) computes that
    text once for all of them (``benchmarks/judges_together.py``). A judge named twice is asked once."""
    specs = [name if isinstance(name, PromptSpec) else JUDGES[name] for name in names]
    distinct = list(dict.fromkeys(specs))
    frames: dict[PromptSpec, pd.DataFrame] = {}
    reading = [spec for spec in distinct if not spec.generates]
    if reading:
        prompts = [_prompts(items, spec) for spec in reading]
        results = label_probs_each(backend, [p for own in prompts for p in own],
                                   [spec.labels for spec, own in zip(reading, prompts) for _ in own])
        for number, spec in enumerate(reading):
            own = results[number * len(items):(number + 1) * len(items)]
            frames[spec] = _frame(spec, _probability_rows(spec, items["item_id"], own))
    for spec in distinct:
        if spec.generates:
            rows = []
            for item_id, result in zip(items["item_id"], backend.generate(_prompts(items, spec), max_tokens=max_tokens)):
                text = result.texts[0]
                label = parse_verdict(text, spec.labels)
                rows.append((item_id, None if label is None else spec.value_of(label), "generated",
                             one_hot(label, spec.labels), text))
            frames[spec] = _frame(spec, rows)
    return [frames[spec].copy() for spec in specs]


def judge_columns(items: pd.DataFrame, names: Sequence[str], backend: Backend, **options) -> pd.DataFrame:
    """Scores of several judges as columns ``judge_<name>`` indexed by ``item_id`` (abstentions missing),
    plus ``judge_<name>_abstained`` counts in ``.attrs``. The judges share one model call
    (:func:`run_judges`)."""
    columns, abstained = {}, {}
    for name, frame in zip(names, run_judges(items, names, backend, **options)):
        result = frame.set_index("item_id")
        columns[f"judge_{name}"] = result["score"]
        abstained[name] = int(result["status"].eq("abstain").sum())
    frame = pd.DataFrame(columns)
    frame.attrs["abstained"] = abstained
    return frame
