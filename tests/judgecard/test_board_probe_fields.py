"""More of what a hostile card maker or a careless scores file can put in front of the judge commands: a card whose
``skipped`` field is not a list of [set, reason] pairs, a judge name of megabytes, and a ``--scores`` file with a line
without an ``item_id`` or with ids that match no item. A bad card is refused by file and field while the others are
ranked; a line without an id is refused by file, line and field (exit 2); lines no item matches are named in a note,
on stderr and in the card's notes, never dropped without a word."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from evalkit.judgecard import judge_card
from evalkit.judgecard.card import Card
from evalkit.judgecard.cli import main
from evalkit.judgecard.judges import FunctionJudge, ScoresJudge
from evalkit.judgecard.sets import HumanSet
from evalkit.paireval.schema import MetaEvalFormatError
from tests.judgecard.test_board_probe import _refused, inputs  # noqa: F401  (the hostile-card fixture)
from tests.judgecard.test_leaderboard import _board_of, board_json, people_set
from tests.judgecard.test_leaderboard import _edited as _write

MAX_NAME_CHARS = 200  # the longest judge name a card may hold (evalkit.judgecard._names.MAX_NAME_CHARS)


# --------------------------------------------------------------------------- a card's skipped field

@pytest.mark.parametrize("skipped, field", [
    (["abc"], "skipped[0]"),
    ([[1, 2]], "skipped[0]"),
    ([["one", "too slow"], ["two"]], "skipped[1]"),
    ([["two", "slow", "again"]], "skipped[0]"),
    ("abc", "skipped"),
    ({"two": "slow"}, "skipped"),
], ids=["a-text", "two-numbers", "one-item", "three-items", "not-a-list", "an-object"])
def test_a_malformed_skipped_field_is_refused_naming_file_and_field_and_the_others_are_ranked(
        inputs, tmp_path, monkeypatch, capsys, skipped, field):
    """``skipped: ["abc"]`` stopped the board with "too many values to unpack" and no file named, ``[[1, 2]]``
    with a TypeError traceback: the field was read without a check and unpacked on the board."""
    sets, cards = inputs
    _write(cards["good"], tmp_path / "cards" / "good")
    bad = _write(cards["weak"], tmp_path / "cards" / "bad", lambda r: r.update(skipped=skipped))
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    error = capsys.readouterr().err
    (refused,) = _refused(out)
    assert refused["file"] == str(bad) and f"field '{field}'" in refused["reason"], refused
    assert "[set, reason] pair" in refused["reason"]
    assert "Traceback" not in error and f"{bad}: {refused['reason']}" in error
    assert [line["judge"] for line in board_json(out)] == ["good"]


def test_a_card_read_back_keeps_a_well_formed_skipped_field_and_refuses_another(inputs):
    _, cards = inputs
    record = json.loads(cards["good"].to_json())
    card = Card.from_record({**record, "skipped": [["three", "no reference replies"]]}, source="ok.json")
    assert card.skipped == (("three", "no reference replies"),)
    with pytest.raises(ValueError, match=r"^bad\.json, field 'skipped\[0\]': \[1, 2\] is not a \[set, reason\]"):
        Card.from_record({**record, "skipped": [[1, 2]]}, source="bad.json")


@pytest.mark.parametrize("edit, field", [
    ({"notes": "one note"}, "notes"),
    ({"notes": ["fine", 3]}, "notes[1]"),
    ({"notes": ["x" * 4001]}, "notes[0]"),
    ({"skipped": [["s" * 201, "slow"]]}, "skipped[0][0]"),
], ids=["notes-a-text", "notes-a-number", "notes-too-long", "skipped-set-name-too-long"])
def test_malformed_or_huge_notes_and_reasons_are_refused_naming_the_field(inputs, edit, field):
    """A bare text as ``notes`` was read as one note per character, and a note or a skipped set's name of any
    length went onto the board's pages."""
    _, cards = inputs
    record = json.loads(cards["good"].to_json())
    with pytest.raises(ValueError, match=rf"^bad\.json, field '{re.escape(field)}': "):
        Card.from_record({**record, **edit}, source="bad.json")


@pytest.mark.parametrize("entry, field", [
    ({"set": "fed"}, "'scores[0]': no field 'item_ids'"),
    ({"set": "fed", "item_ids": ["a"]}, "'scores[0]': no field 'scores'"),
    ({"set": "fed", "item_ids": "a", "scores": [1]}, "'scores[0]'.item_ids: a list"),
    ("fed", "'scores[0]': not a map"),
], ids=["no-ids", "no-scores", "ids-a-text", "a-text"])
def test_a_scores_entry_missing_its_fields_is_refused_naming_the_entry_and_field(inputs, entry, field):
    """A ``scores`` entry without its ``item_ids`` was refused as "no field 'scores'", a field the card holds."""
    _, cards = inputs
    record = json.loads(cards["good"].to_json())
    with pytest.raises(ValueError, match=rf"^bad\.json, field {re.escape(field)}"):
        Card.from_record({**record, "scores": [entry]}, source="bad.json")


# --------------------------------------------------------------------------- a judge name's length

def test_a_judge_name_over_the_cap_is_refused_by_file_and_field_and_the_others_are_ranked(
        inputs, tmp_path, monkeypatch, capsys):
    """A card named with 2 MB of text was ranked, and its name made a leaderboard.md of 6 MB."""
    sets, cards = inputs
    long_name = "w" * (2 * 2**20)
    _write(cards["good"], tmp_path / "cards" / "good")
    bad = _write(cards["weak"], tmp_path / "cards" / "long", lambda r: r.update(judge=long_name))
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    error = capsys.readouterr().err
    (refused,) = _refused(out)
    assert refused["file"] == str(bad) and "field 'judge'" in refused["reason"], refused
    assert f"{len(long_name):,} characters long" in refused["reason"]
    assert f"at most {MAX_NAME_CHARS} characters" in refused["reason"]
    assert "Traceback" not in error and len(error) < 10_000
    assert [line["judge"] for line in board_json(out)] == ["good"]
    assert (out / "leaderboard.md").stat().st_size < 100_000


def test_a_judge_name_at_the_cap_is_ranked(inputs, tmp_path, monkeypatch, capsys):
    sets, cards = inputs
    name = "w" * MAX_NAME_CHARS
    _write(cards["weak"], tmp_path / "cards" / "long", lambda r: r.update(judge=name))
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    assert [line["judge"] for line in board_json(out)] == [name] and _refused(out) == []
    from evalkit.judgecard import _names
    from evalkit.judgecard.card_fields import check_judge_name

    assert _names.MAX_NAME_CHARS == MAX_NAME_CHARS and check_judge_name(name, "x") == name


def test_a_card_is_never_made_with_a_name_a_board_refuses(inputs, tmp_path):
    sets, _ = inputs
    asked = []
    judge = FunctionJudge("j" * (MAX_NAME_CHARS + 1), lambda items: asked.append(1) or np.ones(len(items)))
    with pytest.raises(ValueError, match=rf"judge card: the judge's name is {MAX_NAME_CHARS + 1} characters long"):
        judge_card(judge, list(sets.values()), half="all", bootstrap=0)
    assert asked == []  # refused before any item is scored
    # a scores file's own name (its file and columns) is shortened, visibly, to the cap
    folder = tmp_path / "d"
    folder.mkdir()
    path = folder / ("s" * 230 + ".jsonl")
    path.write_text(json.dumps({"context": ["a"], "response": "b", "score_judge": 1.0}) + "\n")
    name = ScoresJudge(str(path)).name
    assert len(name) == MAX_NAME_CHARS and name.startswith("scores:sss") and name.endswith(".jsonl#score_judge")
    assert "…" in name


# --------------------------------------------------------------------------- a scores file's item ids

def _halved_set(name: str = "own") -> HumanSet:
    """``people_set`` with its first 60 items in the dev half and the rest in the test half."""
    whole = people_set(name, items=120, seed=3)
    items = whole.items.copy()
    items["half"] = ["dev" if k < 60 else "test" for k in range(len(items))]
    return HumanSet(whole.name, items, whole.labels, whole.ratings, whole.no_ratings)


def _scores_file(path, human_set: HumanSet, edit=None) -> list[dict]:
    """A scores file of every item of ``human_set`` (both halves), one line each, in the shape `judge export`
    writes, its lines changed by ``edit(lines)`` when given."""
    items = human_set.items
    lines = [{"item_id": item, "dataset": human_set.name, "context": list(context), "response": response,
              "score_judge": float(k % 7)}
             for k, (item, context, response) in enumerate(zip(items["item_id"], items["context"], items["response"]))]
    if edit is not None:
        edit(lines)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return lines


@pytest.mark.parametrize("value", [None, "", "absent"], ids=["null", "empty", "absent"])
def test_a_scores_line_without_an_item_id_is_refused_naming_file_line_and_field(tmp_path, capsys, value):
    """A line without an id was matched by no item and dropped: the card said n=185, missing=1, and nothing
    named the line."""
    own = _halved_set()
    path = tmp_path / "s.jsonl"
    _scores_file(path, own, lambda lines: lines[7].pop("item_id") if value == "absent"
                 else lines[7].update(item_id=value))
    with pytest.raises(MetaEvalFormatError, match=r"s\.jsonl, line 8, field 'item_id': no item id"):
        ScoresJudge(str(path))
    assert main(["card", "--scores", str(path), "--set", "one", "--bootstrap", "0",
                 "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert "s.jsonl, line 8, field 'item_id': no item id" in error and "Traceback" not in error
    assert not (tmp_path / "out").exists()


def test_scores_lines_no_item_matches_are_named_in_a_note_and_on_stderr(tmp_path, capsys):
    """Lines with an id of no item (a typo, a number where the set's ids are text) were dropped without a word.
    Lines of the set's other half and of sets the card did not score are not named: `judge export --half all`
    writes them all in one file."""
    own = _halved_set()
    path = tmp_path / "s.jsonl"

    def edit(lines):
        lines[70]["item_id"] = 12345  # a number: no item's id
        lines.append({**lines[71], "item_id": "own:nope"})  # an id of no item
        lines.append({**lines[72], "item_id": "two:3", "dataset": "two"})  # another set's line

    _scores_file(path, own, edit)
    card = judge_card(ScoresJudge(str(path)), [own], half="test", bootstrap=0)
    error = capsys.readouterr().err
    (note,) = [note for note in card.notes if note.startswith("s.jsonl:")]
    assert note == ("s.jsonl: 2 lines match no item of the sets scored (own), either half, and were not read: "
                    "line 71 (item_id 12345), line 121 (item_id 'own:nope')")
    assert f"note: {note}" in error
    assert card.rows[0].missing == 1 and card.rows[0].n == 59  # the item of the line with 12345 is unscored
    # the test half alone is scored; the 60 dev-half lines match items of the set's other half: not named
    clean = tmp_path / "clean.jsonl"
    _scores_file(clean, own)
    card = judge_card(ScoresJudge(str(clean)), [own], half="test", bootstrap=0)
    assert not any(note.startswith("clean.jsonl:") for note in card.notes)
    assert "clean.jsonl" not in capsys.readouterr().err


def test_many_unmatched_lines_are_counted_and_the_first_few_named(tmp_path):
    own = _halved_set()
    path = tmp_path / "s.jsonl"
    _scores_file(path, own, lambda lines: [line.update(item_id=f"{line['item_id']}x") for line in lines[:9]])
    note = ScoresJudge(str(path)).unread([own])
    assert note.startswith("s.jsonl: 9 lines match no item of the sets scored (own), either half, and were not "
                           "read: line 1 (item_id 'own0x'), line 2 (item_id 'own1x')")
    assert note.endswith("line 5 (item_id 'own4x'), and 4 more")


def test_a_cards_folder_holding_no_card_json_is_named_not_passed_over(tmp_path):
    """``--cards DIR`` whose card is saved as ``mycard.json`` was read as nothing, without a word."""
    from evalkit.judgecard.cardfiles import NO_CARD, card_files

    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "mycard.json").write_text("{}")
    (tmp_path / "good" / "a").mkdir(parents=True)
    (tmp_path / "good" / "a" / "card.json").write_text("{}")
    files, skipped = card_files([str(tmp_path / "other"), str(tmp_path / "good"), str(tmp_path / "other" / "mycard.json")])
    assert files == [tmp_path / "good" / "a" / "card.json", tmp_path / "other" / "mycard.json"]
    assert skipped == [(str(tmp_path / "other"), NO_CARD)]
