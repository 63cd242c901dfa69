"""``judge card --adapt``: the judge adapted to a set with its dev labels, reported on the test half with its
label-budget curve; a board ranks the adapted card beside the judge's own."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.judgecard import Card, FunctionJudge, card_html, from_meta_eval, judge_card
from evalkit.judgecard.adapt import parse_budget
from evalkit.judgecard.leaderboard import standings
from evalkit.stats import correlation


def questions_set(n: int = 240) -> object:
    """People reward a reply that asks a question and is short; the judge below sees neither."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        words = int(rng.integers(2, 15))
        asks = bool(rng.integers(0, 2))
        reply = " ".join(f"word{j}" for j in range(words)) + (" ?" if asks else " .")
        score = 3 + 1.5 * asks - 0.15 * words + rng.normal(scale=0.4)
        rows.append({"context": [f"a distinct context number {i} with several words in it"], "response": reply,
                     "score": score, "noise": rng.normal()})
    return from_meta_eval(pd.DataFrame(rows), "questions")


def weak_judge() -> FunctionJudge:
    return FunctionJudge("weak", lambda items: items["score"].to_numpy() * 0.05 + items["noise"].to_numpy())


def test_the_adapted_card_learns_what_the_sets_people_reward_and_keeps_its_curve():
    human = questions_set()
    plain = judge_card(weak_judge(), [human], half="test", bootstrap=100)
    card = judge_card(weak_judge(), [human], half="test", bootstrap=100, adapt="all")
    assert card.judge == "weak + all dev labels" and card.spec["adapted"] == "all"
    assert card.rows[0].n == plain.rows[0].n == int((human.items["half"] == "test").sum())
    assert card.rows[0].pearson > plain.rows[0].pearson + 0.3
    curve = {row["budget"]: row for row in card.curves}
    assert list(curve) == ["0", "10", "25", "50", "100", "all"]
    assert curve["0"]["pearson"] == pytest.approx(plain.rows[0].pearson)  # k = 0 is the judge itself
    assert curve["all"]["gain_low"] > 0 and curve["all"]["k"] == int((human.items["half"] == "dev").sum())
    again = Card.from_record(card.record())
    assert again.curves == card.curves
    assert "Label budget" in card_html(card) and "Label budget" not in card_html(plain)
    # A leaderboard recomputes the adapted card's rows from its item scores and ranks it beside the judge's own.
    board = standings([plain, card], {})
    assert {standing.judge for standing in board} == {plain.judge, card.judge}


def test_a_budget_draws_k_dev_items_and_a_bad_budget_or_half_is_refused():
    human = questions_set()
    card = judge_card(weak_judge(), [human], half="test", bootstrap=50, adapt="25")
    assert [row["budget"] for row in card.curves] == ["0", "10", "25"]
    assert "fitted on 25 dev labels" in " ".join(card.notes)
    with pytest.raises(ValueError, match="10 or more"):
        parse_budget("5")
    with pytest.raises(ValueError, match="reported on the test halves"):
        judge_card(weak_judge(), [human], half="dev", adapt="all")


def test_a_set_whose_dev_half_was_not_scored_is_skipped_not_adapted_under_a_false_name():
    human = questions_set()
    only_test = FunctionJudge("test-only", lambda items: np.where(items["half"] == "test", items["noise"], np.nan))
    card = judge_card(only_test, [human], half="test", bootstrap=50, adapt="all")
    assert not card.rows and card.skipped[0][0] == "questions" and "judge export --half all" in card.skipped[0][1]
