"""Self-consistency on the card, a card's scores by set, and a user's own UPHELD-layout annotator files
(``--add-upheld``): hand-made data only, no model."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalkit.judgecard import Card, FunctionJudge, ScoresJudge, card_html, judge_card, merge_cards
from evalkit.judgecard.cli import main
from evalkit.judgecard.judges import PairEvalSettings, Scored, _PairJudge
from evalkit.judgecard import load_set, upheld_folder_set
from evalkit.paireval.schema import MetaEvalFormatError, write_meta_eval
from evalkit.upheld.release import LABELS, UpheldFormatError, read_annotator_folder

from tests.conftest import HEADER, row, write_annotator
from tests.judgecard.test_judgecard import RATINGS, WordEncoder, length_set, rated_set

DRAWS = np.array([[4.0, 2.0, 3.0, 3.0, 1.0, 3.0, 5.0, 2.0],
                  [5.0, 1.0, 3.0, 4.0, 2.0, 2.0, 4.0, 1.0],
                  [3.0, 2.0, 2.0, 4.0, 1.0, 4.0, 5.0, 3.0]])


class DrawingJudge(FunctionJudge):
    """Scores that average three known draws (as PairEval's runs are averaged)."""

    def __init__(self):
        super().__init__("drawing", None)

    def score(self, items):
        index = [int(i[1:]) for i in items["item_id"]]
        draws = tuple(DRAWS[k][index] for k in range(3))
        return Scored(np.mean(draws, axis=0), draws=draws, draws_from="three seeds")


def test_self_consistency_equals_its_hand_computed_values():
    card = judge_card(DrawingJudge(), [rated_set()], half="all", bootstrap=0)
    row = card.consistency[0]
    human = RATINGS.mean(axis=1)
    assert (row.set, row.draws, row.source, row.label) == ("toy", 3, "three seeds", "score")
    assert row.item_sd == pytest.approx(DRAWS.std(axis=0, ddof=1).mean())
    between = [np.corrcoef(DRAWS[a], DRAWS[b])[0, 1] for a, b in ((0, 1), (0, 2), (1, 2))]
    assert row.between_draws == pytest.approx(np.mean(between))
    alone = [np.corrcoef(d, human)[0, 1] for d in DRAWS]
    assert (row.pearson_min, row.pearson_max) == (pytest.approx(min(alone)), pytest.approx(max(alone)))
    assert card.rows[0].pearson == pytest.approx(np.corrcoef(DRAWS.mean(axis=0), human)[0, 1])
    assert not any("not an average" in note for note in card.notes)
    again = Card.from_record(json.loads(card.to_json()))
    assert again.consistency == card.consistency
    page = card_html(card)
    assert "three seeds" in page and f"{row.between_draws:.3f}" in page and row.n == 8


def test_a_judge_without_draws_says_so_instead_of_a_row():
    card = judge_card(FunctionJudge("constant draws", lambda items: np.arange(len(items), dtype=float)),
                      [rated_set()], half="all", bootstrap=0)
    assert card.consistency == ()
    assert any(note.startswith("constant draws gave one draw only on toy") for note in card.notes)
    assert "one draw per set" in card_html(card)


def test_paireval_runs_are_the_draws_and_their_mean_is_the_score():
    pool = [(["a"], "one two three"), (["b"], "one"), (["c"], "one two three four five six")]
    judge = _PairJudge("encoder", WordEncoder, pool=lambda: pool, settings=PairEvalSettings(2, 3, 4, 0))
    scored = judge.score(length_set().items)
    assert len(scored.draws) == 4 and "comparison examples" in scored.draws_from
    np.testing.assert_allclose(np.mean(scored.draws, axis=0), scored.scores)
    card = judge_card(judge, [length_set()], half="all", bootstrap=0)
    assert card.consistency[0].draws == 4 and -1 <= card.consistency[0].between_draws <= 1


def test_several_score_columns_are_draws_and_an_item_missing_in_one_is_unscored(tmp_path):
    items = rated_set().items
    frame = items[["item_id", "context", "response", "score"]].copy()
    frame["seed0"], frame["seed1"] = DRAWS[0], DRAWS[1]
    frame.loc[3, "seed1"] = np.nan
    write_meta_eval(frame, tmp_path / "runs.jsonl")
    card = judge_card(ScoresJudge(str(tmp_path / "runs.jsonl"), ("seed0", "seed1")), [rated_set()], half="all",
                      bootstrap=0)
    assert card.judge == "scores:runs.jsonl#seed0+seed1"
    assert card.rows[0].missing == 1 and card.consistency[0].draws == 2
    keep = np.arange(8) != 3
    mean = DRAWS[:2].mean(axis=0)
    assert card.rows[0].pearson == pytest.approx(np.corrcoef(mean[keep], RATINGS.mean(axis=1)[keep])[0, 1])
    consistency = card.consistency[0]
    assert consistency.n == 7  # the items both draws scored, as the row's
    assert consistency.between_draws == pytest.approx(np.corrcoef(DRAWS[0][keep], DRAWS[1][keep])[0, 1])
    alone = [np.corrcoef(d[keep], RATINGS.mean(axis=1)[keep])[0, 1] for d in DRAWS[:2]]
    assert (consistency.pearson_min, consistency.pearson_max) == (pytest.approx(min(alone)), pytest.approx(max(alone)))
    assert consistency.item_sd == pytest.approx(DRAWS[:2, keep].std(axis=0, ddof=1).mean())
    with pytest.raises(MetaEvalFormatError, match="name each score column once"):
        ScoresJudge(str(tmp_path / "runs.jsonl"), ("seed0", "seed0"))
    status = main(["card", "--scores", str(tmp_path / "runs.jsonl"), "--score-column", "seed0", "--score-column",
                   "seed1", "--set", str(tmp_path / "runs.jsonl"), "--half", "all", "--bootstrap", "0",
                   "--out", str(tmp_path / "out")])
    assert status == 0
    assert json.loads((tmp_path / "out" / "card.json").read_text())["consistency"][0]["draws"] == 2


def test_set_scores_and_scores_on_align_by_item_id():
    card = judge_card(DrawingJudge(), [rated_set()], half="all", bootstrap=0)
    series = card.set_scores("toy")
    assert list(series.index[:2]) == ["i0", "i1"] and series["i1"] == pytest.approx(DRAWS[:, 1].mean())
    reversed_set = rated_set()
    reversed_set = type(reversed_set)("toy", reversed_set.items.iloc[::-1].reset_index(drop=True),
                                      reversed_set.labels, reversed_set.ratings, "")
    np.testing.assert_allclose(card.scores_on(reversed_set), DRAWS.mean(axis=0)[::-1])
    with pytest.raises(KeyError, match="no scores on 'other'"):
        card.set_scores("other")
    merged = merge_cards([card, judge_card(DrawingJudge(), [rated_set("again")], half="all", bootstrap=0)])
    assert [c.set for c in merged.consistency] == ["toy", "again"]


# --------------------------------------------------------------------------- a user's own annotator files

LEVELS = [(5, 5, 5), (1, 1, 1), (4, 3, 5), (2, 1, 1), (3, 3, 5), (5, 5, 5), (1, 1, 1), (4, 5, 5)]


def own_folder(root, *, with_model: bool = True, annotators: int = 3):
    """Eight replies (two to each of four conversations), rated by ``annotators`` people, who disagree by one
    content point on some items."""
    header = HEADER if with_model else [c for c in HEADER if c != "model"]
    for person in range(1, annotators + 1):
        rows = []
        for index, (content, style, reasonable) in enumerate(LEVELS):
            wobble = (index + person) % 3 - 1 if content not in (1, 5) else 0
            rows.append(row(turn_id=f"c{index // 2}-{index % 2 + 2}", model="mine",
                            history=f"user: conversation {index // 2} opens with its own question number "
                                    f"{index // 2}?",
                            reference=f"the reference reply of conversation {index // 2}",
                            candidate=f"reply {index} " + "word " * (index + 1),
                            content=LABELS["content"].spellings[content + wobble],
                            style=style, reasonable=reasonable))
        write_annotator(root, person * 10, rows, header=header)  # any n, not only 1..10
    return root


def test_a_users_annotator_folder_reads_as_a_set_with_a_ceiling(tmp_path):
    folder = own_folder(tmp_path / "my-labels")
    data = read_annotator_folder(folder)
    assert data.labels["annotator"].nunique() == 3 and len(data.items) == 8
    assert set(data.labels["dataset"]) == {"my-labels"} and set(data.labels["model"]) == {"mine"}
    human_set = load_set(str(folder))
    assert human_set.name == "upheld:my-labels" and human_set.labels == ("content", "style", "reasonable")
    assert set(human_set.items["half"]) <= {"dev", "test"} and len(human_set.items) == 8
    card = judge_card("length", [human_set], half="all", bootstrap=0)
    content = next(r for r in card.rows if r.label == "content")
    assert 0 < content.ceiling < 1 and content.share == pytest.approx(content.pearson / content.ceiling)
    assert content.ceiling_note.startswith("sqrt(ICC(1, k))") and "k = 3.00" in content.ceiling_note


def test_a_folder_without_a_model_column_reads_as_the_check_sets_do(tmp_path):
    data = read_annotator_folder(own_folder(tmp_path / "check", with_model=False))
    assert set(data.labels["model"]) == {"unnamed"} and len(data.items) == 8


def test_bad_annotator_folders_are_named(tmp_path):
    with pytest.raises(UpheldFormatError, match="no annotator_<n>.csv"):
        read_annotator_folder((tmp_path / "empty").mkdir() or tmp_path / "empty")
    folder = own_folder(tmp_path / "bad")
    rows = [row(turn_id="c0-2", content="7: very much")]
    write_annotator(folder, 99, rows)
    with pytest.raises(UpheldFormatError, match=r"annotator_99\.csv, row 1, column 'score_task_1_content'"):
        read_annotator_folder(folder)


def test_the_command_adds_an_annotator_folder_and_the_leaderboard_ranks_on_it(tmp_path, capsys):
    folder = own_folder(tmp_path / "my-labels")
    for judge in ("length", "bleu2"):
        assert main(["card", "--judge", judge, "--set", str(folder), "--half", "all", "--bootstrap", "0",
                     "--out", str(tmp_path / "cards" / judge)]) == 0
    record = json.loads((tmp_path / "cards" / "length" / "card.json").read_text())
    assert {r["set"] for r in record["rows"]} == {"upheld:my-labels"}
    capsys.readouterr()
    assert main(["card", "--judge", "length", "--add-upheld", str(tmp_path / "nowhere")]) == 2
    assert "--add-upheld" in (error := capsys.readouterr().err) and "no such folder" in error
    assert main(["leaderboard", "--cards", str(tmp_path / "cards"), "--add-upheld", str(folder), "--bootstrap", "50",
                 "--out", str(tmp_path / "board")]) == 0
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text())["standings"]
    assert len(board) == 2
    assert all(entry["ceiling_rows"] == 3 for entry in board)


def test_several_score_columns_found_by_context_and_response(tmp_path):
    frame = rated_set().items[["context", "response", "score"]].copy()
    frame["a"], frame["b"] = DRAWS[0], DRAWS[2]
    write_meta_eval(frame, tmp_path / "no-ids.jsonl")
    scored = ScoresJudge(str(tmp_path / "no-ids.jsonl"), ("a", "b")).score(rated_set().items.iloc[::-1])
    np.testing.assert_allclose(scored.scores, (DRAWS[0] + DRAWS[2])[::-1] / 2)
    np.testing.assert_allclose(scored.draws[1], DRAWS[2][::-1])


def test_draws_of_the_wrong_length_and_sets_named_twice_are_refused():
    class Short(DrawingJudge):
        def score(self, items):
            scored = super().score(items)
            return Scored(scored.scores, draws=(scored.draws[0][:-1], scored.draws[1]), draws_from="x")

    with pytest.raises(ValueError, match=r"drawing gave draws of shapes .* for 8 items of toy"):
        judge_card(Short(), [rated_set()], half="all", bootstrap=0)
    with pytest.raises(ValueError, match="two sets are named 'toy'"):
        judge_card(DrawingJudge(), [rated_set(), rated_set()], half="all", bootstrap=0)


def test_repeated_item_ids_in_a_users_file_are_refused():
    from evalkit.judgecard import from_meta_eval

    frame = rated_set().items[["item_id", "context", "response", "score"]].copy()
    frame.loc[3, "item_id"] = "i0"
    with pytest.raises(ValueError, match="mine, row 4, field 'item_id': 'i0' is already the id of row 1"):
        from_meta_eval(frame, "mine")


def test_a_folder_whose_files_disagree_on_the_model_column_is_named(tmp_path):
    folder = own_folder(tmp_path / "mixed")
    write_annotator(folder, 5, [row(turn_id="c0-2")], header=[c for c in HEADER if c != "model"])
    with pytest.raises(UpheldFormatError, match=r"annotator_10\.csv, column 'model': has a model column and annotator_5\.csv"):
        read_annotator_folder(folder)


def test_the_command_adds_an_annotator_folder_with_add_upheld(tmp_path, capsys):
    folder = own_folder(tmp_path / "my-labels")
    frame = rated_set().items[["context", "response", "score"]]
    write_meta_eval(frame, tmp_path / "mine.jsonl")
    assert main(["card", "--judge", "length", "--set", str(tmp_path / "mine.jsonl"), "--add-upheld", str(folder),
                 "--half", "all", "--bootstrap", "0", "--out", str(tmp_path / "out")]) == 0
    record = json.loads((tmp_path / "out" / "card.json").read_text())
    assert {r["set"] for r in record["rows"]} == {"mine", "upheld:my-labels"}
    assert main(["leaderboard", "--cards", str(tmp_path / "out"), "--bootstrap", "20",
                 "--add", str(tmp_path / "mine.jsonl"), "--out", str(tmp_path / "board")]) == 0
    assert "upheld:my-labels is on the cards but not in the ranking (pass its folder with --add-upheld" in \
        capsys.readouterr().err


# --------------------------------------------------------------------------- chapter 4's pairwise LM judge on a card

def test_a_pairwise_lm_that_always_answers_a_has_first_slot_rate_1_flip_rate_1_and_its_calls_counted():
    from evalkit.models import CachedBackend
    from evalkit.paireval.lm_judge import LMJudge
    from tests.fakes import ScriptedBackend

    pool = [(["a question about the weather today"], "it is sunny"), (["do you like tea"], "yes, with milk")]
    judge = _PairJudge("lm-pair", lambda: LMJudge(CachedBackend(ScriptedBackend(lambda text: "A"))),
                       pool=lambda: pool, settings=PairEvalSettings(1, 2, 2, 0))
    card = judge_card(judge, [rated_set()], half="all", bootstrap=0)
    (slot,) = card.slots
    assert slot.pairs == 4 and slot.first_slot == 1.0 and slot.flip == 1.0
    cost = card.costs[0]
    assert cost.calls == 8 * 2 * 2 + 4 * 2  # PairEval: items x pool x orders; the slot probe: pairs x orders
    assert cost.prompt_tokens == 10 * cost.calls and card.consistency[0].draws == 2


def test_lm_pair_and_lora_specs(tmp_path):
    from evalkit.judgecard import parse_spec, read_spec_file
    from evalkit.data.specfile import SpecError

    assert parse_spec("lm-pair").kind == "lm-pair" and parse_spec("lora:smoke").recipe == "smoke"
    assert parse_spec("lora").recipe == "book"
    path = tmp_path / "pair.yml"
    path.write_text("kind: lm-pair\nbackend: openai\nmodel: qwen\nbase_url: http://127.0.0.1:9/v1\n")
    spec = read_spec_file(path)
    assert (spec.backend, spec.model, spec.base_url) == ("openai", "qwen", "http://127.0.0.1:9/v1")
    assert spec.title == "lm-pair (openai qwen at 127.0.0.1:9/v1)"  # the endpoint names the judge apart
    path.write_text("kind: lm-pair\ntemplate: 'Reply: {candidate}'\n")
    with pytest.raises(SpecError, match="template.*only an lm judge reads it"):
        read_spec_file(path)
    path.write_text("kind: lora\nbackend: openai\n")
    with pytest.raises(SpecError, match="backend.*only an lm or lm-pair judge reads it"):
        read_spec_file(path)


def test_cards_scored_from_two_files_of_one_name_do_not_merge(tmp_path):
    """A --scores card's judge record was only "scores:<file name>#<column>", so `leaderboard --merge` joined a
    card scored from d1/s.jsonl on one set with a card scored from d2/s.jsonl (other scores) on another, as one
    judge. The record keeps a digest of the file: the two are two judges, and merging them is refused."""
    from evalkit.judgecard.card import merge_cards
    items = rated_set().items
    for folder, sign in (("d1", 1.0), ("d2", -1.0)):
        frame = items[["item_id", "context", "response", "score"]].copy()
        frame["score_judge"] = sign * DRAWS[0]
        (tmp_path / folder).mkdir()
        write_meta_eval(frame, tmp_path / folder / "s.jsonl")
    one, two = (judge_card(ScoresJudge(str(tmp_path / folder / "s.jsonl")), [rated_set()], half="all", bootstrap=0)
                for folder in ("d1", "d2"))
    assert one.judge == two.judge == "scores:s.jsonl#score_judge" and one.spec != two.spec
    with pytest.raises(ValueError, match="differ in spec"):
        merge_cards([one, two])
