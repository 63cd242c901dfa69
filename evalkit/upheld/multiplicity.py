"""Chapter 3 — conversational multiplicity (UPHELD §4.2, Table 2).

Is a single human reference a fair target? Where a dialogue allows many good next turns, two samples from
the same model disagree in content and a reference-based metric punishes valid answers. We sample two
continuations of each context at temperature 1 through the model door and measure how often they carry the
same content: by embedding cosine (above a threshold) and by a yes/no judge.
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from evalkit.upheld.llm_judges import JUDGES, format_history, judge_messages
from evalkit.upheld.metrics import ReferenceMetrics
from evalkit.models import Backend
from evalkit.data.dialogue import History

__all__ = ["continuation_prompt", "multiplicity", "multiplicity_contexts"]


def continuation_prompt(history: History) -> list[dict[str, str]]:
    """Ask the model for the next assistant turn of ``history`` (third person, as small models need)."""
    return [{"role": "user", "content": "Here is a conversation between a user and an assistant.\n\n"
             f"{format_history(history)}\n\nWrite the assistant's next reply, in one or two sentences."}]


def multiplicity_contexts(items: pd.DataFrame, open_ended: pd.DataFrame, n: int, *, seed: int = 0) -> pd.DataFrame:
    """The three sets of the experiment, ``n`` contexts each (``set`` column): UPHELD first turns, random UPHELD
    turns (one row per turn, whatever its candidates) and the open-ended set's items."""
    first = items[items["turn"] <= 1].drop_duplicates("turn_id")
    turns = items.drop_duplicates("turn_id")
    return pd.concat([
        first.sample(min(n, len(first)), random_state=seed).assign(set="UPHELD first turn"),
        turns.sample(min(n, len(turns)), random_state=seed).assign(set="UPHELD random turn"),
        open_ended.sample(min(n, len(open_ended)), random_state=seed).assign(set="Topical-Chat (open-ended)"),
    ])


def multiplicity(contexts: pd.DataFrame, backend: Backend, scorer: ReferenceMetrics, *, max_tokens: int = 48,
                 seed: int = 0, same_content_threshold: float = 0.7) -> pd.DataFrame:
    """For each row of ``contexts`` (columns ``set``, ``history``): two sampled continuations, their
    embedding cosine, whether it clears ``same_content_threshold``, and P(Yes) of the yes/no judge that
    they carry the same information."""
    prompts = [continuation_prompt(history) for history in contexts["history"]]
    first = [r.texts[0] for r in backend.generate(prompts, max_tokens=max_tokens, temperature=1.0, seed=seed)]
    second = [r.texts[0] for r in backend.generate(prompts, max_tokens=max_tokens, temperature=1.0, seed=seed + 1)]
    cosine = scorer.score(first, second)["embedding_cosine"].to_numpy()
    judge_prompts = [judge_messages(JUDGES["yes_no"], h, a, b) for h, a, b in zip(contexts["history"], first, second)]
    verdicts = backend.label_probs(judge_prompts, ["Yes", "No"])
    return pd.DataFrame({
        "set": contexts["set"].to_numpy(), "first": first, "second": second, "embedding_cosine": cosine,
        "same content (cosine)": cosine >= same_content_threshold,
        "P(Yes) judge": [np.nan if v.probs is None else v.probs["Yes"] for v in verdicts]})
