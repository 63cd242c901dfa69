"""Chapter 5's trained realism judge: a leak-free split, the proxy's teacher-forced turns, training that learns
and is cached, and the scores it gives MirrorBench's labelled items."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.models import GenerationResult
from evalkit.paireval.splits import leaked_units
from evalkit.userproxy import human_labels, realism_encoder as rz


def _conversation(*texts: str) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)]


def _frame(name: str, n: int, offset: int = 0) -> pd.DataFrame:
    rows = [_conversation(f"question number {offset + i} about the weather in town {i} please tell me",
                          f"answer number {offset + i} it will rain in town {i} later today for sure",
                          f"follow up {offset + i} do i need an umbrella or a coat for that walk",
                          f"reply {offset + i} take the umbrella and the coat to stay dry and warm") for i in range(n)]
    return pd.DataFrame({"dataset": name, "conversation_id": [f"{name}-{i}" for i in range(n)],
                         "goal": [f"the person {i} wants a forecast" for i in range(n)], "turns": rows})


def test_split_keeps_every_held_out_text_out_of_training():
    frames = {"a": _frame("a", 30), "b": _frame("b", 30, offset=100)}
    labelled = [frames["a"]["turns"].iloc[5], frames["b"]["turns"].iloc[7]]  # two training candidates labelled
    split = rz.realism_split(frames, {"labelled": labelled}, train_per_set=10, heldout_per_set=5, seed=1)
    assert len(split.train) == 20 and len(split.heldout) == 10
    texts = lambda frame: [[t["content"] for t in c] for c in frame["turns"]]  # noqa: E731
    held = texts(split.heldout) + [[t["content"] for t in c] for c in labelled]
    assert leaked_units(texts(split.train), held) == set()
    assert not set(split.train["conversation_id"]) & set(split.heldout["conversation_id"])
    labelled_ids = {"a-5", "b-7"} - set(split.heldout["conversation_id"])
    assert split.report.removed_by["labelled"] == len(labelled_ids)
    assert split.per_set.loc["a", "held out"] == 5
    with pytest.raises(ValueError, match="mirror set 'a'.*asks 40"):
        rz.realism_split(frames, {}, train_per_set=40, heldout_per_set=5)


def test_split_cuts_training_against_every_sets_held_out_draw():
    # set b repeats every conversation of set a: whatever a holds out must not be trained on through b
    frames = {"a": _frame("a", 20), "b": _frame("b", 20)}
    split = rz.realism_split(frames, {}, train_per_set=5, heldout_per_set=5, seed=2)
    texts = lambda frame: [[t["content"] for t in c] for c in frame["turns"]]  # noqa: E731
    assert leaked_units(texts(split.train), texts(split.heldout)) == set()
    held = {name: {int(i.split("-")[1]) for i in split.heldout["conversation_id"] if i.startswith(name)}
            for name in frames}
    assert split.per_set.loc["b", "removed (shares held-out text)"] == len(held["a"] - held["b"]) > 0


def test_split_of_the_real_mirror_sets_leaks_no_labelled_item(real_data_dir):
    from evalkit.userproxy.data import load_human_labels, load_mirror_set

    frames = {name: load_mirror_set(name, data_dir=real_data_dir)[0]
              for name in ("chatbot_arena", "clariq", "oasst1", "qulac")}
    labels = load_human_labels(data_dir=real_data_dir)
    recipe = rz.REALISM_RECIPES["book"]
    labelled = rz.labelled_conversations(labels)
    split = rz.realism_split(frames, {"labelled": labelled}, train_per_set=recipe.train_per_set,
                             heldout_per_set=recipe.heldout_per_set, seed=recipe.seed)
    train = [[t["content"] for t in c] for c in split.train["turns"]]
    held = [[t["content"] for t in c] for c in list(split.heldout["turns"]) + labelled]
    assert leaked_units(train, held) == set()
    assert split.report.removed_by["labelled"] > 0  # the arena set does contain labelled conversations


class _EchoProxy:
    """Writes 'proxy says <position>' and records every prompt it was shown."""

    name = "echo-proxy"

    def __init__(self):
        self.prompts = []

    def generate(self, prompts, *, max_tokens=128, temperature=0.0, n=1, seed=0):
        self.prompts.extend(prompts)
        return [GenerationResult([f"USER: proxy says {len(self.prompts) - len(prompts) + i}\nASSISTANT: hi"], 5, 5)
                for i in range(len(prompts))]


def test_proxy_rewrites_teacher_force_the_real_history_and_alternate_goals():
    frame = _frame("a", 3)
    proxy = _EchoProxy()
    rewritten = rz.proxy_rewrites(frame, proxy, user_turns=2, goal_levels=("full", "none"), user_tokens=8)
    assert len(proxy.prompts) == 6  # two user turns per conversation, one batched call
    first, second = proxy.prompts[0][0]["content"], proxy.prompts[1][0]["content"]
    assert "About the person: the person 0" in first and "has not started yet" in first
    assert "question number 0" in second and "proxy says" not in second  # the real history, not the proxy's
    assert "About the person" not in proxy.prompts[2][0]["content"]  # the second row gets no goal
    assert [t["content"] for t in rewritten[0]] == ["proxy says 0", "answer number 0 it will rain in town 0 later "
                                                    "today for sure", "proxy says 1"]
    assert frame["turns"].iloc[0][0]["content"].startswith("question")  # the input is not modified
    pairs = rz.realism_pairs(frame, rewritten, 2)
    assert pairs.loc[0, "proxy"] == "proxy says 0\nproxy says 1" and pairs.loc[0, "human"].startswith("question")


def test_proxy_rewrites_keep_a_restored_opening_and_name_failures():
    frame = _frame("q", 2).assign(topic_restored=[True, False])
    proxy = _EchoProxy()
    rewritten = rz.proxy_rewrites(frame, proxy, user_turns=1, goal_levels=("none",), user_tokens=8)
    assert rewritten[0][0]["content"].startswith("question") and rewritten[0][2]["content"] == "proxy says 0"
    assert rewritten[1][0]["content"] == "proxy says 1" and len(rewritten[1]) == 1
    pairs = rz.realism_pairs(frame, rewritten, 1)
    assert pairs["proxy"].tolist() == ["proxy says 0", "proxy says 1"]  # the restored opening is on neither side
    assert pairs.loc[0, "human"].startswith("follow up 0")
    with pytest.raises(ValueError, match="goal_levels"):
        rz.proxy_rewrites(frame, proxy, user_turns=1, goal_levels=("topic",), user_tokens=8)

    class Failing(_EchoProxy):
        def generate(self, prompts, **options):
            results = super().generate(prompts, **options)
            return [GenerationResult([""], 0, 0, error="HTTP 500") for _ in results[:1]] + results[1:]

    with pytest.raises(RuntimeError, match="conversation 'q-0', turn 2: HTTP 500"):
        rz.proxy_rewrites(frame, Failing(), user_turns=1, goal_levels=("none",), user_tokens=8)

    class Silent(_EchoProxy):
        def generate(self, prompts, **options):
            return [GenerationResult(["USER: "], 1, 1)] + super().generate(prompts, **options)[1:]

    empty = []
    rewritten = rz.proxy_rewrites(frame, Silent(), user_turns=1, goal_levels=("none",), user_tokens=8,
                                  empty_turns=empty)
    assert empty == [{"conversation_id": "q-0", "turn": 2}] and rewritten[0][2]["content"] == "…"


def test_pair_scores_are_symmetric_and_the_length_baseline_prefers_the_terse_user():
    real = [_conversation("where is the bus"), _conversation("hi")]
    proxy = [_conversation("Hello! I would be delighted to learn where the bus station might be located."),
             _conversation("hi")]
    scores = rz.pair_scores(rz.length_scores(real), rz.length_scores(proxy))
    assert scores["pi"][0] < 0.5 and scores["pi"][1] == 0.5 and scores["gteval"][1] == 1.0
    swapped = rz.pair_scores(rz.length_scores(proxy), rz.length_scores(real))
    assert np.allclose(scores["gteval"], swapped["gteval"]) and np.allclose(scores["pi"], 1 - swapped["pi"])


def _toy_pairs(n: int, seed: int) -> pd.DataFrame:
    """Terse lower-case requests (human) against chatty self-introductions (proxy): learnable."""
    rng = np.random.default_rng(seed)
    topics = ["bus times", "a cake recipe", "tax forms", "python lists", "cheap flights", "dog food", "a poem"]
    human = [f"{rng.choice(['need', 'want', 'looking for'])} {rng.choice(topics)} asap" for _ in range(n)]
    proxy = [f"Hey there! I'm Sarah, and I'm here to help you with {rng.choice(topics)}. Can you help me?"
             for _ in range(n)]
    return pd.DataFrame({"dataset": "toy", "human": human, "proxy": proxy})


@pytest.mark.slow
def test_training_learns_is_cached_and_scores_the_labelled_items(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    recipe = rz.RealismRecipe(epochs=2, batch_size=8, curve_points=2, head_learning_rate=1e-2)
    train, heldout = _toy_pairs(32, 0), _toy_pairs(16, 1)
    run = rz.train_realism_encoder(train, heldout, recipe)
    assert not run.from_cache and run.pairs == 64 and len(run.losses) == 8
    assert [point["pairs"] for point in run.curve] == [0, 32, 64]
    assert run.curve[0]["accuracy"] == 0.5 and run.curve[-1]["accuracy"] >= 0.9  # a zero head ties every pair
    assert np.mean(run.losses[-2:]) < np.mean(run.losses[:2])
    again = rz.train_realism_encoder(train, heldout, recipe)
    assert again.from_cache and again.losses == run.losses and again.weights == run.weights
    judge = rz.RealismEncoder.from_training(run)
    won = judge.score_texts(list(heldout["human"])) > judge.score_texts(list(heldout["proxy"]))
    assert np.mean(won) == pytest.approx(run.curve[-1]["accuracy"])
    # the labelled-item scores line up with the items and enter the agreement table beside the other judges
    items = {"gteval": pd.DataFrame({"human_label": [1.0, 0.2, 0.1], "judge_score": [0.9, 0.3, 0.2]}),
             "gteval_pairs": [(_conversation(h), _conversation(p)) for h, p in
                              [("need bus times", "need tax forms"), ("want a poem asap", heldout["proxy"][0]),
                               ("dog food", heldout["proxy"][1] + " " + heldout["proxy"][2])]],
             "pi": pd.DataFrame({"judge_score": [0.1, 0.9, 0.5]}), "pi_human": np.array([0.0, 1.0, 0.5]),
             "pi_pairs": [(_conversation("need a cake recipe"), _conversation(heldout["proxy"][3])),
                          (_conversation(heldout["proxy"][4]), _conversation("looking for cheap flights")),
                          (_conversation("hi"), _conversation("hi"))], "pi_slots": ["A", "B", "A"]}
    scores = rz.label_item_scores(items, judge.score)
    assert scores["gteval"][0] > scores["gteval"][1] and scores["pi"][1] > 0.5 > scores["pi"][0]
    assert scores["pi"][2] == pytest.approx(0.5)
    table = human_labels.human_label_agreement(items, {}, scored={"trained": scores}, bootstrap=0)
    assert list(table.index[:2]) == ["GTEval, trained", "PI, trained"] and table.loc["PI, trained", "n"] == 3
    length = rz.label_item_scores(items, rz.length_scores)
    differences = human_labels.human_label_differences(items, {"trained": scores, "length": length}, "trained",
                                                  ["length"], bootstrap=50)
    assert list(differences.index) == [("GTEval", "length"), ("PI", "length")] and (differences["n"] == 3).all()


def test_realism_recipe_refuses_what_it_cannot_train_and_length_matching_drops_what_differs():
    for bad in ({"temperatures": ()}, {"temperatures": (-0.5,)}, {"length_ratio": 0.5}, {"batch_pairs": "some"}):
        with pytest.raises(ValueError):
            rz.RealismRecipe(**bad)
    pairs = pd.DataFrame({"human": ["one two", "a b c d", ""], "proxy": ["one two three four", "a b c", "x"]})
    kept, dropped = rz.length_matched(pairs, 1.5)
    assert kept["human"].tolist() == ["a b c d", ""] and dropped == 1  # an empty side counts as one word
