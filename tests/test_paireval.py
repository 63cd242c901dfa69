"""PairEval first increment: DailyDialog reading, training pairs, position-swapped scoring."""
from __future__ import annotations

import zipfile

import numpy as np
import pytest

from evalkit.models import LabelResult
from evalkit.paireval import paireval_scores, read_dailydialog, training_pairs


class PositionBiased:
    """Prefers slot A with probability ``bias`` whatever the replies say — a pure position bias."""

    name = "biased:test"

    def __init__(self, bias: float = 0.9):
        self.bias, self.prompts = bias, []

    def label_probs(self, prompts, labels):
        self.prompts.extend(prompts)
        return [LabelResult({"A": self.bias, "B": 1 - self.bias}, "A", "logprobs", 1.0) for _ in prompts]


class KnowsQuality:
    """Knows quality (good > meh > bad) and answers P(A) = sigmoid(quality A - quality B)."""

    name = "oracle:test"
    QUALITY = {"good": 2.0, "meh": 1.0, "bad": 0.0}

    def _quality(self, reply: str) -> float:
        return next(value for word, value in self.QUALITY.items() if word in reply)

    def label_probs(self, prompts, labels):
        results = []
        for messages in prompts:
            text = messages[-1]["content"]
            reply_a = text.split("Reply A:")[1].split("\n")[0]
            reply_b = text.split("Reply B:")[1].split("\n")[0]
            p_a = 1 / (1 + np.exp(self._quality(reply_b) - self._quality(reply_a)))
            results.append(LabelResult({"A": p_a, "B": 1 - p_a}, "A", "logprobs", 1.0))
        return results


def test_position_swap_cancels_position_bias():
    contexts, responses = [["Hi there"], ["How are you?"]], ["a good reply", "a bad reply"]
    comparisons = [(["Hello"], "other reply"), (["Morning"], "another reply")]
    backend = PositionBiased(0.9)
    both = paireval_scores(contexts, responses, comparisons, backend)
    assert both == pytest.approx([0.5, 0.5])  # 0.9 as A, 0.1 as B, averaged
    assert len(backend.prompts) == 2 * 2 * 2  # targets x comparisons x orders
    assert paireval_scores(contexts, responses, comparisons, PositionBiased(0.9), positions="first") == \
        pytest.approx([0.9, 0.9])
    assert paireval_scores(contexts, responses, comparisons, PositionBiased(0.9), positions="second") == \
        pytest.approx([0.1, 0.1])


def test_a_judge_that_knows_quality_ranks_replies():
    scores = paireval_scores([["Hi"], ["Hi"]], ["a good reply", "a bad reply"], [(["Yo"], "meh")], KnowsQuality())
    assert scores[0] > 0.5 > scores[1]


def test_training_pairs_balance_slots_and_draw_negatives_elsewhere():
    dialogues = [[f"d{d} t{t}" for t in range(5)] for d in range(20)]
    pairs = training_pairs(dialogues, 400, seed=3)
    assert 0.4 < (pairs["better"] == "A").mean() < 0.6
    for row in pairs.itertuples():
        positive = row.first if row.better == "A" else row.second
        negative = row.second if row.better == "A" else row.first
        source = int(positive.split()[0][1:])
        assert row.context == [f"d{source} t{t}" for t in range(int(positive.split()[1][1:]))][-4:]
        assert not negative.startswith(f"d{source} ")
    assert training_pairs(dialogues, 50, seed=3).equals(training_pairs(dialogues, 50, seed=3))


def test_read_dailydialog_and_malformed_line(tmp_path):
    archive = tmp_path / "train.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("train/dialogues_train.txt", "Hi . __eou__ Hello ! __eou__\nHow are you ? __eou__ Fine . __eou__\n")
        bundle.writestr("train/dialogues_act_train.txt", "1 2\n")
    assert read_dailydialog(archive) == [["Hi .", "Hello !"], ["How are you ?", "Fine ."]]
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(broken, "w") as bundle:
        bundle.writestr("test/dialogues_test.txt", "Hi . __eou__ Hello ! __eou__\nonly one __eou__\n")
    with pytest.raises(ValueError, match="line 2: fewer than two utterances"):
        read_dailydialog(broken)


def test_real_dailydialog(real_data_dir):
    from evalkit.paireval import load_dailydialog

    dialogues = load_dailydialog("validation", data_dir=real_data_dir)  # checksums verified on the way
    assert len(dialogues) == 1000 and all(len(d) >= 2 for d in dialogues)
    assert np.mean([len(d) for d in dialogues]) > 5
