"""Parsing a judge's text reply: a refusal, or a reply that only restates the scale, is an abstention (its
score missing), while real answers still parse — for judges that generate and for judges whose backend
could only parse a generated reply."""
from __future__ import annotations

import pandas as pd
import pytest

from evalkit.models.base import GenerationResult, LabelResult, parse_label
from evalkit.upheld.llm_judges import judge, parse_verdict

LIKERT = ["1", "2", "3", "4", "5"]
REFUSALS = ["I refuse; on a 1 to 5 scale I cannot say.", "I will not rate this reply.", "I refuse to rate this.",
            "I cannot score this reply on a 1-5 scale.", "The scale is 1 to 5.", "Scale: 1 (poor) to 5 (excellent).",
            "I'm unable to assess this, sorry.", "Out of 5? I can't judge that.", "No score: 1-5 does not apply.",
            "N/A"]
ANSWERS = {"4": "4", "Score: 4/5": "4", "I'd give it a 4.": "4", "On a 1 to 5 scale, I'd give it a 4.": "4",
           "4 out of 5": "4", "Rating (1-5): 2": "2", "Reason: the reference is conveyed.\nScore: 5": "5",
           "Score: 3 - I cannot say more than that.": "3", "Verdict: 1": "1", "2/5, it misses the price.": "2"}


@pytest.mark.parametrize("text", REFUSALS)
def test_a_refusal_or_a_restated_scale_is_an_abstention(text):
    assert parse_verdict(text, LIKERT) is None, text


def test_the_old_parse_read_the_scale_as_an_answer():
    # What the reply parsed to before: the 1 of "1 to 5" (this test documents why parse_verdict changed).
    assert parse_label("I refuse; on a 1 to 5 scale I cannot say.", LIKERT) == "1"


@pytest.mark.parametrize("text", sorted(ANSWERS))
def test_real_answers_still_parse(text):
    assert parse_verdict(text, LIKERT) == ANSWERS[text], text


def test_yes_no_answers_and_refusals():
    labels = ["Yes", "No"]
    assert [parse_verdict(t, labels) for t in ("Yes.", "No, it adds a price.", "Verdict: No", "I think yes.",
                                               "I cannot decide between yes and no.", "I won't answer that.")] == \
        ["Yes", "No", "No", "Yes", None, None]


class _Replies:
    """A backend that has no probabilities: it generates the given replies, and label_probs parses them as
    an OpenAI-compatible endpoint without logprobs does (one-hot on the first label word)."""

    name = "replies"

    def __init__(self, replies):
        self.replies = replies

    def generate(self, prompts, *, max_tokens=128, temperature=0.0, n=1, seed=0):
        return [GenerationResult([reply]) for reply, _ in zip(self.replies, prompts)]

    def label_probs(self, prompts, labels):
        results = []
        for reply, _ in zip(self.replies, prompts):
            label = parse_label(reply, labels)
            results.append(LabelResult(None if label is None else {l: float(l == label) for l in labels}, reply,
                                       "generated", 1.0))
        return results


@pytest.mark.parametrize("name", ["likert", "likert_explain"])
def test_a_judge_abstains_on_a_refusal_and_scores_an_answer(name):
    replies = ["I refuse; on a 1 to 5 scale I cannot say.", "I will not rate this reply.", "I'd give it a 4.",
               "On a 1 to 5 scale: 2"]
    items = pd.DataFrame({"item_id": [1, 2, 3, 4], "history": [[("user", "Hi")]] * 4,
                          "reference": ["Hello"] * 4, "candidate": ["Hey"] * 4})
    frame = judge(items, name, _Replies(replies)).set_index("item_id")
    assert frame["status"].tolist() == ["abstain", "abstain", "ok", "ok"], frame
    assert frame["score"].isna().tolist() == [True, True, False, False]
    assert frame.loc[3, "score"] == 4 and frame.loc[4, "score"] == 2
    assert frame.loc[1, "raw_text"] == replies[0]  # the reply is kept, never replaced by a number


def test_anchors_restating_the_scale_are_no_answer_but_one_anchor_is():
    assert parse_verdict("Scale: 1 = poor, 5 = excellent.", LIKERT) is None
    assert parse_verdict("4 = most of the reference is conveyed", LIKERT) == "4"
