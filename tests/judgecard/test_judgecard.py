"""The judge card (evalkit.judgecard): tiny hand-made sets and fake judges; no model is loaded."""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.models.cache import CallRecord
from evalkit.judgecard import (CannotScore, FunctionJudge, HumanSet, ScoresJudge, card_html, from_meta_eval,
                               judge_card, parse_spec, read_spec_file)
from evalkit.judgecard.cli import main
from evalkit.judgecard.judges import PairEvalSettings, _PairJudge, _LMJudge
from evalkit.judges import Judge, ScoresByDirect
from evalkit.models import CachedBackend
from evalkit.paireval.schema import MetaEvalFormatError, write_meta_eval
from evalkit.data.specfile import SpecError
from evalkit.stats import group_resamples

from tests.fakes import ScriptedBackend

RATINGS = np.array([[5, 4, 5], [1, 2, 1], [3, 3, 4], [4, 5, 5], [2, 1, 2], [3, 2, 2], [5, 5, 4], [1, 1, 2]], float)


def rated_set(name: str = "toy") -> HumanSet:
    """Eight items, two replies to each of four contexts, three raters each (an UPHELD-like set)."""
    contexts = [[f"context number {i // 2} about a topic"] for i in range(8)]
    replies = ["yes", "no it is not so", "maybe later today", "sure", "never ever again no", "ok then",
               "certainly, with pleasure", "hm"]
    items = pd.DataFrame({"item_id": [f"i{i}" for i in range(8)], "group": [f"g{i // 2}" for i in range(8)],
                          "half": ["dev", "dev", "test", "test", "dev", "dev", "test", "test"],
                          "context": contexts, "history": [[("user", c[0])] for c in contexts], "response": replies,
                          "reference": ["the reference"] * 8, "dataset": name, "score": RATINGS.mean(axis=1)})
    ratings = pd.DataFrame([{"item_id": f"i{i}", "rater": r, "score": RATINGS[i, r]} for i in range(8)
                            for r in range(3)])
    return HumanSet(name, items, ("score",), ratings, "")


def fixed(name: str, values, **options) -> FunctionJudge:
    return FunctionJudge(name, lambda items: np.asarray(values, dtype=float)[[int(i[1:]) for i in items["item_id"]]],
                         **options)


# --------------------------------------------------------------------------- agreement, ceiling, share

def test_card_equals_hand_computed_correlations_ceiling_and_share():
    judge_scores = np.array([4.0, 2.5, 3.0, 3.5, 1.0, 3.0, 4.5, 2.0])
    card = judge_card(fixed("fixed", judge_scores), [rated_set()], half="all", bootstrap=200)
    row = card.rows[0]
    human = RATINGS.mean(axis=1)
    assert row.n == 8 and row.groups == 4 and row.missing == 0
    assert row.pearson == pytest.approx(stats.pearsonr(judge_scores, human)[0])
    assert row.spearman == pytest.approx(stats.spearmanr(judge_scores, human)[0])
    assert row.kendall == pytest.approx(stats.kendalltau(judge_scores, human)[0])
    assert row.pearson_low <= row.pearson <= row.pearson_high
    # the ceiling by hand: one-way ANOVA with k = 3 raters per item, ICC(1, k) = (MSB - MSW) / MSB
    means = RATINGS.mean(axis=1)
    msb = 3 * ((means - RATINGS.mean()) ** 2).sum() / (8 - 1)
    msw = ((RATINGS - means[:, None]) ** 2).sum() / (8 * (3 - 1))
    ceiling = np.sqrt((msb - msw) / msb)
    assert row.ceiling == pytest.approx(ceiling)
    assert row.share == pytest.approx(row.pearson / ceiling)
    others = [np.corrcoef(RATINGS[:, r], np.delete(RATINGS, r, axis=1).mean(axis=1))[0, 1] for r in range(3)]
    assert np.isnan(row.one_person)  # fewer than 10 items per rater: not estimated
    assert not row.at_ceiling and 0 < row.share < 1


def test_one_person_against_the_others_by_hand():
    from evalkit.judgecard import noise_ceiling

    ratings = np.random.default_rng(4).integers(1, 6, size=(12, 3)).astype(float)
    ratings[:, 1] = np.clip(ratings[:, 0] + np.random.default_rng(5).integers(-1, 2, size=12), 1, 5)
    frame = pd.DataFrame([{"item_id": i, "rater": r, "content": ratings[i, r]} for i in range(12) for r in range(3)])
    result = noise_ceiling(frame, "content")
    others = [np.corrcoef(ratings[:, r], np.delete(ratings, r, axis=1).mean(axis=1))[0, 1] for r in range(3)]
    assert result.one_person == pytest.approx(np.mean(others)) and result.items == 12


def test_a_judge_equal_to_the_human_mean_reaches_the_ceiling_check():
    card = judge_card(fixed("people", RATINGS.mean(axis=1)), [rated_set()], half="all", bootstrap=0)
    row = card.rows[0]
    assert row.pearson == pytest.approx(1.0) and row.share > 1 and row.at_ceiling
    assert card.summary()["at_ceiling"] == ["toy/score"]


def test_sets_without_individual_ratings_say_so_and_have_no_ceiling():
    frame = rated_set().items[["context", "response", "reference", "score"]]
    card = judge_card("length", [from_meta_eval(frame, "means")], half="all", bootstrap=0)
    row = card.rows[0]
    assert np.isnan(row.ceiling) and np.isnan(row.share) and row.ceiling_note == "the file holds one score per item"


def test_the_test_half_is_the_default_and_halves_split_the_items():
    judge = fixed("fixed", np.arange(8.0))
    test, dev, whole = (judge_card(judge, [rated_set()], half=h, bootstrap=0).rows[0] for h in ("test", "dev", "all"))
    default = judge_card(judge, [rated_set()], bootstrap=0).rows[0]
    assert (default.n, default.pearson) == (test.n, test.pearson)
    assert (test.n, dev.n, whole.n) == (4, 4, 8)
    with pytest.raises(ValueError, match="half must be"):
        judge_card(judge, [rated_set()], half="train")


def test_bootstrap_resamples_whole_contexts():
    groups = ["a", "a", "a", "b", "c", "c"]
    for draw in group_resamples(groups, bootstrap=50, seed=3):
        counts = pd.Series(draw).value_counts()
        for members in ([0, 1, 2], [4, 5]):  # a group's items are drawn together, as often as each other
            assert len({counts.get(i, 0) for i in members}) == 1


# --------------------------------------------------------------------------- biases

def length_set() -> HumanSet:
    """Twenty contexts, two replies each; people prefer the shorter reply in every pair."""
    rows = []
    for c in range(20):
        short, long = " ".join(["w"] * (2 + c % 3)), " ".join(["w"] * (8 + c % 5))
        rows += [{"context": [f"distinct context {c} with enough words here"], "response": short, "score": 4.0 + c % 2},
                 {"context": [f"distinct context {c} with enough words here"], "response": long, "score": 2.0 - c % 2}]
    return from_meta_eval(pd.DataFrame(rows), "shorter-is-better")


def test_a_judge_that_prefers_the_longer_reply_is_flagged_for_length_bias():
    row = judge_card("length", [length_set()], half="all", bootstrap=200).rows[0]
    assert row.shorter_preferred_pairs == 20 and row.prefers_longer == 1.0 and row.prefers_longer_low > 0.5
    assert row.length_bias
    noise = np.random.default_rng(0).normal(scale=0.3, size=40)
    fair = FunctionJudge("people", lambda items: items["score"].to_numpy() + noise)
    fair_row = judge_card(fair, [length_set()], half="all", bootstrap=200).rows[0]
    assert fair_row.prefers_longer == 0.0 and not fair_row.length_bias


def test_a_judge_that_always_answers_first_has_first_slot_rate_1_and_flip_rate_1():
    always_first = FunctionJudge("first", lambda items: np.zeros(len(items)),
                                 pairwise=lambda contexts, first, second: np.ones((len(first), 2)))
    slot = judge_card(always_first, [length_set()], half="all", bootstrap=0).slots[0]
    assert (slot.pairs, slot.first_slot, slot.flip) == (20, 1.0, 1.0)


def test_a_consistent_pairwise_judge_never_flips_and_a_pointwise_one_has_no_slots():
    def longer_wins(contexts, first, second):
        p = np.array([float(len(a) > len(b)) for a, b in zip(first, second)])
        return np.stack([p, 1 - p], axis=1)

    consistent = FunctionJudge("consistent", lambda items: np.zeros(len(items)), pairwise=longer_wins)
    slot = judge_card(consistent, [length_set()], half="all", bootstrap=0).slots[0]
    assert slot.flip == 0.0 and slot.first_slot == 0.5  # the longer reply wins in either slot
    assert judge_card("length", [length_set()], half="all", bootstrap=0).slots == ()


class WordEncoder(ScoresByDirect):
    """An encoder-shaped double: relevance = words in the reply (no model); the scoring code treats it as the
    kit's EncoderJudge (the one Judge protocol: score through its DirectEval probability, orders,
    pairwise_matrix, calls)."""

    name = "encoder:words"

    def relevance(self, contexts, replies):
        return np.array([len(str(r).split()) for r in replies], dtype=float)

    def prefer(self, first, second):
        return 1 / (1 + np.exp(-(np.asarray(first) - np.asarray(second))))

    def pairwise_matrix(self, contexts, replies, comparisons, *, positions="both"):
        p = self.prefer(self.relevance(contexts, replies)[:, None],
                        self.relevance(*zip(*comparisons))[None, :])
        return np.stack([p, p], axis=-1)

    def orders(self, first_contexts, first, second_contexts, second):
        p = self.prefer(self.relevance(first_contexts, first), self.relevance(second_contexts, second))
        return np.stack([p, p], axis=1)

    def direct(self, contexts, replies):
        return self.prefer(self.relevance(contexts, replies), 3.0)


def test_every_judge_a_card_holds_answers_the_one_judge_protocol(tmp_path):
    from evalkit.judgecard.judges import build_judge
    from evalkit.judgecard.spec import parse_spec

    scores = tmp_path / "scores.jsonl"
    write_meta_eval(pd.DataFrame({"context": [["hi"]], "response": ["hello"], "score_judge": [0.5]}), scores)
    judges = [FunctionJudge("length", len), ScoresJudge(str(scores)), WordEncoder(),
              _PairJudge("encoder", WordEncoder, pool=lambda: []), build_judge(parse_spec("lm:yes_no"))]
    assert all(isinstance(judge, Judge) for judge in judges)
    one_at_a_time = [judges[0], judges[1], judges[4]]
    assert all(judge.orders([["hi"]], ["a"], [["hi"]], ["b"]) is None for judge in one_at_a_time)
    assert all(judge.pairwise_matrix([["hi"]], ["a"], [(["x"], "b")]) is None for judge in one_at_a_time)
    assert judges[3].orders([["hi"]], ["a b"], [["hi"]], ["a"]).shape == (1, 2)  # a chapter-4 judge compares


def test_encoder_judges_score_by_comparison_with_the_pool_and_have_symmetric_slots():
    pool = [(["a"], "one two three"), (["b"], "one"), (["c"], "one two three four five six")]
    judge = _PairJudge("encoder", WordEncoder, pool=lambda: pool, settings=PairEvalSettings(2, 3, 4, 0))
    items = length_set().items
    scores = judge.score(items).scores
    words = items["response"].str.split().map(len).to_numpy()
    assert stats.spearmanr(scores, words)[0] == pytest.approx(1.0)  # PairEval ranks replies as f does
    card = judge_card(judge, [length_set()], half="all", bootstrap=0)
    assert card.slots[0].flip == 0.0 and card.slots[0].first_slot == 0.5  # P(A) + P(B) = 1: no position bias
    direct = _PairJudge("directeval", WordEncoder, method="direct").score(items).scores
    assert np.all((direct > 0) & (direct < 1))


def test_the_judges_of_a_card_run_share_one_leak_cut_per_seed_and_data_dir(monkeypatch):
    from evalkit import paireval
    from evalkit.judgecard import judges as J

    built = []
    monkeypatch.setattr(paireval, "judge_data", lambda *, seed: built.append(seed) or object())
    monkeypatch.setattr(J, "_JUDGE_DATA", {})
    monkeypatch.setenv("EVALKIT_DATA_DIR", "/data/one")
    first = J._recipe_data("book")
    assert J._recipe_data("book") is first and len(built) == 1  # the second judge reuses the cut
    monkeypatch.setenv("EVALKIT_DATA_DIR", "/data/two")
    assert J._recipe_data("book") is not first and len(built) == 2  # another data dir: built again


# --------------------------------------------------------------------------- abstentions and cost

class CountingJudge(FunctionJudge):
    """Abstains on every third item with a raw answer, and records two model calls per item (half of them
    answered by a cache)."""

    def __init__(self, name):
        super().__init__(name, None)
        self.records = []

    def score(self, items):
        from evalkit.judgecard import Scored

        self.records += [CallRecord("fake", "label_probs", 100, 5, 0.25, i % 2 == 0) for i in range(2 * len(items))]
        scores = np.arange(len(items), dtype=float)
        scores[::3] = np.nan
        return Scored(scores, tuple("I cannot say" if i % 3 == 0 else str(i) for i in range(len(items))))

    def calls(self):
        return list(self.records)


def test_abstentions_keep_their_raw_text_and_cost_counts_calls_tokens_and_money():
    judge = CountingJudge("counting")
    card = judge_card(judge, [rated_set(), rated_set("again")], half="all", bootstrap=0, price_per_1k_tokens=2.0)
    cost = card.costs[1]  # the second set's own calls only
    assert cost.abstained == 3 and cost.examples[0] == ("i0", "I cannot say") and card.rows[1].missing == 3
    assert (cost.calls, cost.cache_hits, cost.prompt_tokens, cost.completion_tokens) == (16, 8, 1600, 80)
    assert cost.model_seconds == pytest.approx(4.0) and cost.money == pytest.approx(1680 / 1000 * 2.0)
    assert card.summary()["calls"] == 32 and card.summary()["money"] == pytest.approx(2 * 3.36)


def test_an_lm_judge_through_the_model_door_reports_calls_tokens_cache_hits_and_money():
    best = ("Option B: yes", "Option B: sure", "Option B: certainly")  # the three replies people rated 4.67
    backend = CachedBackend(ScriptedBackend(lambda text: "5" if any(b in text for b in best) else "2"))
    spec = parse_spec("lm:instructions_content")
    judge = _LMJudge("lm:instructions_content", spec, _backend=backend)
    card = judge_card(judge, [rated_set()], half="all", bootstrap=0, price_per_1k_tokens=1.0)
    cost = card.costs[0]
    assert (cost.calls, cost.prompt_tokens, cost.completion_tokens) == (8, 80, 8)
    assert cost.money == pytest.approx(88 / 1000)
    assert cost.cache_hits == 0 and card.rows[0].n == 8
    assert card.rows[0].pearson > 0.5  # the scripted answers follow the best-rated replies


def test_a_second_card_is_answered_by_the_call_cache(tmp_path):
    from evalkit.models.cache import CallCache

    cache = CallCache(tmp_path / "calls.sqlite")
    for expected_hits in (0, 8):
        backend = CachedBackend(ScriptedBackend(lambda text: "3"), cache)
        judge = _LMJudge("lm:likert", parse_spec("lm:likert"), _backend=backend)
        cost = judge_card(judge, [rated_set()], half="all", bootstrap=0).costs[0]
        assert (cost.calls, cost.cache_hits) == (8, expected_hits)


def test_a_reference_metric_on_a_set_without_references_is_skipped_with_its_reason():
    frame = rated_set().items[["context", "response", "score"]]
    card = judge_card("bleu2", [from_meta_eval(frame, "no-refs")], half="all", bootstrap=0)
    assert card.rows == () and card.skipped[0][0] == "no-refs" and "needs a reference" in card.skipped[0][1]
    with pytest.raises(CannotScore):
        FunctionJudge("m", len, needs_reference=True).score(from_meta_eval(frame, "x").items)


# --------------------------------------------------------------------------- scores files

def test_a_scores_file_gives_the_same_card_as_the_judge_that_wrote_it(tmp_path):
    frame = length_set().items[["context", "response", "score"]].copy()
    frame["score_judge"] = [len(r.split()) for r in frame["response"]]
    write_meta_eval(frame, tmp_path / "scored.jsonl")
    from_file = judge_card(ScoresJudge(str(tmp_path / "scored.jsonl")), [length_set()], half="all", bootstrap=0)
    direct = judge_card("length", [length_set()], half="all", bootstrap=0)
    assert from_file.rows[0].pearson == pytest.approx(direct.rows[0].pearson)


def test_a_scores_file_without_a_sets_items_skips_that_set(tmp_path):
    frame = pd.DataFrame({"context": [["elsewhere"]] * 3, "response": ["a", "b", "c"], "score": [1.0, 2.0, 3.0],
                          "score_judge": [1.0, 2.0, 3.0]})
    write_meta_eval(frame, tmp_path / "other.jsonl")
    card = judge_card(ScoresJudge(str(tmp_path / "other.jsonl")), [length_set()], half="all", bootstrap=0)
    assert card.rows == () and card.skipped == (("shorter-is-better", "the judge scored none of its 40 items"),)
    assert card.costs[0].abstained == 40 and card.spec["kind"] == "ScoresJudge"


def test_a_bad_scores_file_is_named(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"context": ["a"], "response": "b", "score": 1, "score_judge": True}) + "\n")
    with pytest.raises(MetaEvalFormatError, match=r"s\.jsonl, line 1, field 'score_judge'"):
        ScoresJudge(str(path))
    with pytest.raises(MetaEvalFormatError, match=r"s\.jsonl: no score column 'mine'"):
        ScoresJudge(str(path), "mine")


def test_a_scores_file_with_a_repeated_item_id_is_refused_naming_file_line_and_id(tmp_path, capsys):
    """A repeated id kept the last row's score without a word (Pearson 0.538 became 0.039); ``--add`` refuses
    repeated ids, and so does ``--scores``."""
    path = tmp_path / "s.jsonl"
    rows = [{"item_id": f"i{k}", "context": ["a"], "response": f"r{k}", "score": k, "score_judge": k} for k in range(4)]
    rows.append({**rows[1], "score_judge": -7})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(MetaEvalFormatError, match=r"s\.jsonl, line 5, field 'item_id': 'i1' is already the id of "
                                                  r"line 2"):
        ScoresJudge(str(path))
    assert main(["card", "--scores", str(path), "--set", str(path), "--half", "all", "--bootstrap", "0",
                 "--out", str(tmp_path / "out")]) == 2
    assert "s.jsonl, line 5, field 'item_id': 'i1'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- specs

@pytest.mark.parametrize("text, message", [
    ("nonsense", "judge 'nonsense': not a judge the kit knows"),
    ("paireval:nope", "judge 'paireval:nope': no recipe 'nope'"),
    ("lm:nope", "judge 'lm:nope': no prompt 'nope'"),
    ("length:3", "judge 'length:3': not a judge"),
])
def test_bad_spec_strings_are_named(text, message):
    with pytest.raises(SpecError, match=message):
        parse_spec(text)


@pytest.mark.parametrize("body, message", [
    ("kind: lm\nprompt: likert\ncolour: red\n", r"line 3: unknown field\(s\) colour"),
    ("kind: lm\ntemplate: 'Rate {history}'\nlabels: ['1', '2']\n", r"line 2, field 'template': has no \{candidate\}"),
    ("kind: lm\ntemplate: '{candidate} {mood}'\nlabels: ['1']\n", r"line 2, field 'template': unknown placeholder"),
    ("kind: lm\ntemplate: '{candidate}'\nlabels: ['a', 'b']\nvalues: [1]\n", r"line 4, field 'values': 1 values"),
    ("kind: lm\ntemplate: '{candidate}'\nlabels: [good, bad]\n", r"line 3, field 'labels': are not numbers"),
    ("kind: lm\nprompt: likert\nbackend: openai\nmodel: m\n", r"field 'base_url': an openai backend needs"),
    ("kind: lm\nprompt: likert\ntemplate: '{candidate}'\n", "give exactly one of prompt"),
    ("kind: bleu2\nmodel: gpt\n", r"line 2, field 'model': only an lm or lm-pair judge reads it"),
    ("kind: paireval\nrecipe: nope\n", r"line 2, field 'recipe'"),
    ("kind: lm\nprompt: likert\nprice_per_1k_tokens: '0.1'\n",
     r"line 3, field 'price_per_1k_tokens': expected a number"),
    ("kind: magic\n", r"line 1, field 'kind': 'magic' is not one of"),
    ("kind: [lm\n", "not valid YAML"),
])
def test_bad_spec_files_are_named_with_line_and_field(tmp_path, body, message):
    path = tmp_path / "judge.yml"
    path.write_text(body)
    with pytest.raises(SpecError, match=f"{path}.*{message}" if "line" in message else message) as error:
        read_spec_file(path)
    assert str(path) in str(error.value)


def test_a_spec_file_of_ones_own_prompt_reads_whole(tmp_path):
    path = tmp_path / "mine.yml"
    path.write_text("kind: lm\nname: mine\nbackend: openai\nmodel: m\nbase_url: http://127.0.0.1:1/v1\n"
                    "template: |\n  {history}\n  Reply: {candidate}\n  Good? yes or no\nlabels: ['yes', 'no']\n"
                    "values: [1, 0]\ntarget: reasonable\nprice_per_1k_tokens: 0.5\n")
    spec = parse_spec(str(path))
    assert (spec.name, spec.labels, spec.values, spec.price_per_1k_tokens) == ("mine", ("yes", "no"), (1.0, 0.0), 0.5)
    assert spec.as_record()["labels"] == ["yes", "no"]


# --------------------------------------------------------------------------- outputs and the command

def test_html_escapes_injected_text():
    evil = "<script>alert('x')</script>"
    items = rated_set(evil).items
    human_set = HumanSet(evil, items, ("score",), None, evil)
    judge = CountingJudge(evil)
    card = judge_card(judge, [human_set], half="all", bootstrap=0)
    page = card_html(card)
    assert "<script>" not in page and "&lt;script&gt;" in page
    import xml.etree.ElementTree as ElementTree

    svg = page[page.index("<svg"):page.index("</svg>") + 6]
    assert len(ElementTree.fromstring(svg).findall("{http://www.w3.org/2000/svg}rect")) == 1  # one bar, parsed
    assert json.loads(judge_card(judge, [human_set], half="all", bootstrap=0).to_json())["judge"] == evil


def test_evalkit_judge_card_is_a_subcommand(tmp_path):
    from evalkit.cli.commands import main as evalkit_main

    write_meta_eval(length_set().items[["context", "response", "score"]], tmp_path / "mine.jsonl")
    assert evalkit_main(["judge", "card", "--judge", "length", "--set", str(tmp_path / "mine.jsonl"), "--half", "all",
                         "--bootstrap", "0", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "card.html").is_file()


def test_the_command_writes_card_json_and_html(tmp_path, capsys):
    frame = length_set().items[["context", "response", "score"]]
    write_meta_eval(frame, tmp_path / "mine.jsonl")
    status = main(["card", "--judge", "length", "--set", str(tmp_path / "mine.jsonl"), "--half", "all",
                   "--bootstrap", "50", "--out", str(tmp_path / "out")])
    assert status == 0
    record = json.loads((tmp_path / "out" / "card.json").read_text())
    assert record["rows"][0]["set"] == "mine" and record["rows"][0]["length_bias"] is True
    assert (tmp_path / "out" / "card.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["card", "--judge", "nonsense", "--set", str(tmp_path / "mine.jsonl")]) == 2
    assert "judge 'nonsense'" in capsys.readouterr().err
    assert main(["card", "--judge", "length", "--add", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: no such file" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("EVALKIT_DATA_DIR"), reason="needs the staged data (EVALKIT_DATA_DIR)")
@pytest.mark.parametrize("judge", ["length", "bleu2"])
def test_cards_on_the_staged_sets(judge, tmp_path):
    assert main(["card", "--judge", judge, "--bootstrap", "100", "--out", str(tmp_path)]) == 0
    record = json.loads((tmp_path / "card.json").read_text())
    names = {row["set"] for row in record["rows"]}
    assert {"upheld-main", "upheld-llm_arena", "upheld-topical_chat", "personachat-usr"} <= names
    ceilings = {(r["set"], r["label"]): r["ceiling"] for r in record["rows"]}
    assert 0 < ceilings["upheld-main", "content"] < 1 and 0 < ceilings["personachat-usr", "score"] < 1
    notes = {r["set"]: r["ceiling_note"] for r in record["rows"]}
    assert notes["personachat-usr"].startswith("sqrt(ICC(1, k))") and "k = 3.00" in notes["personachat-usr"]
    if judge == "length":
        assert "k = 5.00" in notes["fed"] and 0 < ceilings["fed", "score"] < 1
        people = {r["set"]: r["one_person"] for r in record["rows"]}
        assert people["fed"] is None and 0 < people["topicalchat-usr"] < 1  # FED names no rater, USR does
    assert notes["dailydialog-grade"] == "means only in the staged files"
    if judge == "length":
        assert {"fed", "dailydialog-zhao"} <= names and record["rows"][0]["n"] > 100
    else:
        assert {s for s, _ in record["skipped"]} == {"fed", "dailydialog-zhao"}


def test_the_cards_paireval_settings_are_chapter_4s_parameters():
    from evalkit.judgecard.judges import BOOK_PAIREVAL
    from evalkit.book.runner import NOTEBOOK_DIR, chapter_parameter_values

    chapter = chapter_parameter_values(NOTEBOOK_DIR / "04_pairwise_judge.md")
    assert (chapter["comparisons"], chapter["pool_size"], chapter["runs"], chapter["seed"]) == (
        BOOK_PAIREVAL.comparisons, BOOK_PAIREVAL.pool_size, BOOK_PAIREVAL.runs, BOOK_PAIREVAL.seed)


def test_lm_judges_asked_together_leave_their_cards_only_cache_hits(tmp_path, monkeypatch):
    import evalkit.models as models
    from evalkit.models.cache import CallCache
    from evalkit.judgecard import prefetch_lm

    scripted = ScriptedBackend(lambda text: "Yes" if "Yes or No" in text else "3")
    monkeypatch.setattr(models, "open_backend",
                        lambda *args, **kwargs: CachedBackend(scripted, CallCache(tmp_path / "calls.sqlite")))
    specs = [parse_spec(text) for text in ("lm:yes_no", "lm:likert", "length")]
    other = rated_set("other")
    other.items["response"] = other.items["response"] + " indeed"  # its own prompts, not the first set's
    halves = [rated_set(), other]
    seconds = prefetch_lm(specs, halves, half="test", items_per_set=3, seed=3)  # whole contexts of 2: 4 items
    assert list(seconds) == ["scripted:test"] and scripted.calls == 2 * 2 * 4  # 2 judges x 2 sets x 4 items
    for spec in specs[:2]:
        card = judge_card(spec, halves, bootstrap=0, seed=3, items_per_set=3)
        assert [(cost.calls, cost.cache_hits) for cost in card.costs] == [(4, 4), (4, 4)]
    assert scripted.calls == 16  # the cards asked the model nothing
    assert prefetch_lm(specs[:1] + specs[2:], halves) == {}  # one LM judge alone: nothing to share
    explained = [parse_spec(text) for text in ("lm:yes_no_explain", "lm:likert_explain")]
    assert prefetch_lm(explained, halves) == {} and scripted.calls == 16  # generated answers share nothing


def test_a_card_record_with_a_text_where_a_number_belongs_is_refused_naming_the_field():
    from evalkit.judgecard import Card

    record = judge_card("length", [length_set()], half="all", bootstrap=0).record()
    record["rows"][0]["pearson"] = "0.9"  # on any row, checked by the board or not: it would reach the averages
    with pytest.raises(ValueError, match=r"^edited\.json, field 'rows\[0\]': 'pearson' is '0\.9', not a number"):
        Card.from_record(record, source="edited.json")
    record["rows"][0]["pearson"], record["rows"][0]["n"] = 0.5, True
    with pytest.raises(ValueError, match=r"'n' is True, not a number"):
        Card.from_record(record, source="edited.json")
