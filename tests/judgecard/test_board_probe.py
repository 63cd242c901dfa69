"""What a hostile card maker can put in front of ``judge leaderboard``: a number beyond a float's range, a named
pipe or an oversized file called card.json, a near copy of another card, and a judge name with bidirectional
controls. Each bad card is refused with its file and field named while the other cards are ranked; a near copy
counts once; a name is shown with its invisible characters escaped."""
from __future__ import annotations

import json
import os
import threading

import numpy as np
import pytest

from evalkit.judgecard import judge_card
from evalkit.judgecard import cardfiles
from evalkit.judgecard.card import Card
from evalkit.judgecard._names import one_line
from tests.judgecard.test_leaderboard import _board_of, board_json, column_judge, people_set
from tests.judgecard.test_leaderboard import _edited as _write


@pytest.fixture(scope="module")
def inputs():
    sets = {name: people_set(name, seed=k) for k, name in enumerate(("one", "two"))}
    rng = np.random.default_rng(33)
    truth = {n: s.items["truth"].to_numpy() for n, s in sets.items()}
    judges = {"good": {n: t + rng.normal(scale=1.0, size=len(t)) for n, t in truth.items()},
              "weak": {n: t + rng.normal(scale=3.0, size=len(t)) for n, t in truth.items()}}
    cards = {name: judge_card(column_judge(name, values), list(sets.values()), half="all", bootstrap=0)
             for name, values in judges.items()}
    return sets, cards


def _refused(out):
    return json.loads((out / "leaderboard.json").read_text())["refused_cards"]


def _first_score_as_huge_integer(record):
    record["scores"][0]["scores"][0] = 0.5
    return json.dumps(record).replace('"scores": [0.5,', '"scores": [1' + "0" * 400 + ",", 1)


def _row_pearson_as_huge_integer(record):
    record["rows"][0]["pearson"] = 0.25
    return json.dumps(record).replace('"pearson": 0.25', '"pearson": 1' + "0" * 400, 1)


@pytest.mark.parametrize("edit, field", [
    (_first_score_as_huge_integer, "scores[0]"),
    (lambda r: json.dumps(r).replace('"bootstrap": 0', '"bootstrap": 1e400', 1), "bootstrap"),
    (lambda r: json.dumps(r).replace('"seed": 0', '"seed": 1e400', 1), "seed"),
    (lambda r: json.dumps(r).replace('"seed": 0', '"seed": 1' + "0" * 400, 1), "seed"),
    (_row_pearson_as_huge_integer, "rows[0]"),
    (lambda r: json.dumps({**r, "rows": [{**r["rows"][0], "n": 1e400}, *r["rows"][1:]]}), "rows[0]"),
    (lambda r: json.dumps({**r, "costs": [{**r["costs"][0], "seconds": 1e400}, *r["costs"][1:]]}), "costs[0]"),
], ids=["score-1e400-digits", "bootstrap-1e400", "seed-1e400", "seed-400-digits", "row-pearson-400-digits",
        "row-n-1e400", "cost-seconds-1e400"])
def test_a_number_beyond_a_float_is_refused_naming_file_and_field_and_the_others_are_ranked(
        inputs, tmp_path, monkeypatch, capsys, edit, field):
    sets, cards = inputs
    _write(cards["good"], tmp_path / "cards" / "good")
    bad = _write(cards["weak"], tmp_path / "cards" / "huge", edit)
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    error = capsys.readouterr().err
    (refused,) = _refused(out)
    assert refused["file"] == str(bad) and f"field '{field}" in refused["reason"], refused
    assert "Traceback" not in error and f"{bad}: {refused['reason']}" in error
    assert "huge/card.json: field" in (out / "leaderboard.md").read_text()
    assert [line["judge"] for line in board_json(out)] == ["good"]


def test_a_card_read_back_refuses_numbers_it_cannot_hold_with_a_value_error(inputs):
    _, cards = inputs
    record = json.loads(cards["good"].to_json())
    Card.from_record(record, source="ok.json")  # the card as written reads back
    for key, value in (("bootstrap", float("inf")), ("seed", 10 ** 400), ("seed", 2.5)):
        with pytest.raises(ValueError, match=rf"^bad\.json, field '{key}' is "):
            Card.from_record({**record, key: value}, source="bad.json")
    scores = [{**record["scores"][0], "scores": [10 ** 400, *record["scores"][0]["scores"][1:]]}]
    with pytest.raises(ValueError, match=r"scores\[0\]: an integer of 401 digits is not a finite score"):
        Card.from_record({**record, "scores": scores}, source="bad.json")


def _board_in_thread(sets, cards_folder, monkeypatch, out):
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("rc", _board_of(cards_folder, sets, monkeypatch,
                                                                                  out)), daemon=True)
    thread.start()
    thread.join(timeout=60)
    return thread, outcome


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_called_card_json_is_left_out_never_opened(inputs, tmp_path, monkeypatch, capsys):
    sets, cards = inputs
    _write(cards["good"], tmp_path / "cards" / "good")
    pipe = tmp_path / "cards" / "pipe" / "card.json"
    pipe.parent.mkdir()
    os.mkfifo(pipe)
    out = tmp_path / "board"
    try:
        thread, outcome = _board_in_thread(sets, tmp_path / "cards", monkeypatch, out)
        assert not thread.is_alive(), "the board waits on the named pipe"
    finally:  # a board still waiting on the pipe reads an empty file and ends
        try:
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert outcome["rc"] == 0
    (refused,) = _refused(out)
    assert refused["file"] == str(pipe) and "not a regular file" in refused["reason"]
    assert [line["judge"] for line in board_json(out)] == ["good"]
    # named directly, too
    files, skipped = cardfiles.card_files([str(pipe)])
    assert files == [] and skipped == [(str(pipe), cardfiles.NOT_A_FILE)]


def test_a_card_file_over_the_size_cap_is_refused_by_name(inputs, tmp_path, monkeypatch, capsys):
    sets, cards = inputs
    assert cardfiles.MAX_CARD_BYTES == 64 * 2**20
    _write(cards["good"], tmp_path / "cards" / "good")
    large = _write(cards["weak"], tmp_path / "cards" / "large", lambda r: json.dumps(r) + " " * 4096)
    cap = (tmp_path / "cards" / "good" / "card.json").stat().st_size + 1000  # the good card fits, the large not
    monkeypatch.setattr(cardfiles, "MAX_CARD_BYTES", cap)
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    (refused,) = _refused(out)
    assert refused["file"] == str(large) and f"larger than {cap:,} bytes (MAX_CARD_BYTES)" in refused["reason"]
    assert [line["judge"] for line in board_json(out)] == ["good"]


@pytest.mark.parametrize("merge", [(), ("--merge",)], ids=["lines", "merge"])
def test_a_near_copy_of_a_card_counts_once_naming_both_files(inputs, tmp_path, monkeypatch, capsys, merge):
    sets, cards = inputs
    original = _write(cards["good"], tmp_path / "cards" / "good")
    near = _write(cards["good"], tmp_path / "cards" / "near",
                  lambda r: r.update(notes=[*r["notes"], "x"], spec={**r["spec"], "said": "best"}))
    _write(cards["weak"], tmp_path / "cards" / "weak")
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out, *merge) == 0
    error = capsys.readouterr().err
    lines = board_json(out)
    assert sorted(line["judge"] for line in lines) == ["good", "weak"], lines
    record = json.loads((out / "leaderboard.json").read_text())
    assert record["copies_counted_once"] == [{"file": str(near), "same_as": str(original),
                                              "differs_in": ["notes", "spec"]}]
    assert record["refused_cards"] == []
    assert f"{near} holds the same card as {original}" in error
    assert "near/card.json: the same card as" in (out / "leaderboard.md").read_text()


def test_two_different_cards_of_one_judge_stay_two_lines(inputs, tmp_path, monkeypatch, capsys):
    sets, cards = inputs
    _write(cards["good"], tmp_path / "cards" / "a")
    # one item scored otherwise: another result, not counted once (its rows, not rewritten, are then refused)
    _write(cards["good"], tmp_path / "cards" / "b",
           lambda r: r["scores"][0]["scores"].__setitem__(0, r["scores"][0]["scores"][0] + 1.0))
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    record = json.loads((out / "leaderboard.json").read_text())
    assert record["copies_counted_once"] == []
    assert [r["file"] for r in record["refused_cards"]] == [str(tmp_path / "cards" / "b" / "card.json")]


def test_bidirectional_controls_in_a_judge_name_and_notes_are_shown_escaped(inputs, tmp_path, monkeypatch, capsys):
    sets, cards = inputs
    name = "good\u202elave\u2066x\u200b"
    _write(cards["good"], tmp_path / "cards" / "good",
           lambda r: r.update(judge=name, notes=[*r["notes"], "see \u202eevil"]))
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    shown = capsys.readouterr()
    texts = {"stdout": shown.out, "stderr": shown.err, "leaderboard.md": (out / "leaderboard.md").read_text(),
             "card page": (out / "cards" / "00" / "card.html").read_text()}
    for where, text in texts.items():
        assert not any(c in text for c in "\u202e\u2066\u200b"), where
    assert "good\\u202elave\\u2066x\\u200b" in shown.out
    assert "good\\u202elave\\u2066x\\u200b" in texts["card page"] and "see \\u202eevil" in texts["card page"]
    assert "\\u202e" in texts["leaderboard.md"]
    assert one_line("a\u202eb\u2067c") == "a\\u202eb\\u2067c"


def test_card_names_made_to_collide_with_the_renamings_still_give_one_line_each(inputs, tmp_path, monkeypatch,
                                                                                capsys):
    sets, cards = inputs
    _write(cards["good"], tmp_path / "cards" / "a")
    _write(cards["weak"], tmp_path / "cards" / "y")
    # Each crafted card is a judge of its own under a name that the board's own renaming would produce.
    a = tmp_path / "cards" / "a"
    rng = np.random.default_rng(7)
    for folder, name in (("m", "good"), ("m2", f"good ({a})"), ("m3", f"good ({a}) ({a / 'card.json'})")):
        values = {n: s.items["truth"].to_numpy() + rng.normal(scale=2.0, size=len(s.items)) for n, s in sets.items()}
        _write(judge_card(column_judge(name, values), list(sets.values()), half="all", bootstrap=0),
               tmp_path / "cards" / folder)
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    judges = [line["judge"] for line in board_json(out)]
    assert len(judges) == len(set(judges)) == 5, judges
    assert "weak" in judges, judges


def test_a_word_for_word_copy_is_not_called_the_original(inputs, tmp_path, monkeypatch, capsys):
    sets, cards = inputs
    _write(cards["good"], tmp_path / "cards" / "y")
    _write(cards["good"], tmp_path / "cards" / "0mallory")  # sorts first: the board cannot know it came second
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    page = (out / "leaderboard.md").read_text()
    assert "cannot tell which was written first" in page and "not its maker" in page
    assert "a copy cannot tell which file came first" in capsys.readouterr().err


def test_an_edited_copy_that_sorts_first_is_named_with_the_card_it_differs_from(inputs, tmp_path, monkeypatch):
    """A copy of a card with its spec and costs edited, in a folder that sorts first, gives the same result and is
    kept: the line names the other file too, and the fields they differ in."""
    sets, cards = inputs
    _write(cards["good"], tmp_path / "cards" / "zz-honest")
    _write(cards["good"], tmp_path / "cards" / "00-edited",
           lambda record: record.update(spec={**record["spec"], "name": "another model"}))
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    (line,) = [line for line in board_json(out) if "00-edited" in line["card"]]
    assert "zz-honest" in line["card"] and "differs in spec" in line["card"], line["card"]
    assert "zz-honest" in (out / "leaderboard.md").read_text()


def test_a_copy_under_another_name_or_with_scores_shifted_counts_once(inputs, tmp_path, monkeypatch, capsys):
    """A card copied under another judge name, or with every score scaled and shifted (its rows still verify), was
    ranked as a second line tied with the original. (A copy jittered so that its rows no longer match its scores
    is refused on its own, before copies are counted.)"""
    sets, cards = inputs
    original = _write(cards["good"], tmp_path / "cards" / "a-good")
    renamed = _write(cards["good"], tmp_path / "cards" / "b-renamed", lambda r: r.update(judge="my own judge"))

    def shifted(record):  # scaled and shifted, its items reversed, another seed (its rows still verify)
        record["seed"] = record.get("seed", 0) + 1
        for entry in record["scores"]:
            entry["scores"] = [None if s is None else 2.0 * s + 1.0 for s in entry["scores"]]
            entry["item_ids"], entry["scores"] = entry["item_ids"][::-1], entry["scores"][::-1]

    moved = _write(cards["good"], tmp_path / "cards" / "c-shifted", shifted)
    _write(cards["weak"], tmp_path / "cards" / "weak")
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    assert sorted(line["judge"] for line in board_json(out)) == [f"good (also named my own judge by {renamed})", "weak"]
    record = json.loads((out / "leaderboard.json").read_text())
    copies = {copy["file"]: copy for copy in record["copies_counted_once"]}
    assert set(copies) == {str(renamed), str(moved)} and {c["same_as"] for c in copies.values()} == {str(original)}
    assert copies[str(renamed)]["differs_in"] == ["judge"] and "scores" in copies[str(moved)]["differs_in"]
    assert "under another judge name" in capsys.readouterr().err


def test_a_renamed_copy_that_sorts_first_does_not_take_the_originals_name_away(inputs, tmp_path, monkeypatch):
    """Mallory copies Alice's card under her own judge name into a folder that sorts first: the board keeps the
    first file's line, and that line names Alice's judge and file too, so her name never vanishes from the table."""
    sets, cards = inputs
    alice = _write(cards["good"], tmp_path / "cards" / "zz-alice")
    _write(cards["good"], tmp_path / "cards" / "aa-mallory", lambda record: record.update(judge="mallory-judge"))
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    (line,) = board_json(out)
    assert line["judge"] == f"mallory-judge (also named good by {alice})", line
    assert "also named good" in (out / "leaderboard.md").read_text()


def test_a_card_the_board_refuses_is_no_namesake_of_the_card_it_names(inputs, tmp_path, monkeypatch, capsys):
    """A card naming another's judge but with scores its rows do not match is refused; the real card's line keeps
    its name as written, and no note counts the refused card as a second card of that judge."""
    sets, cards = inputs
    _write(cards["good"], tmp_path / "cards" / "alice")

    def noisy(record):  # Alice's card with its scores turned round: its rows no longer match them
        record["judge"] = "good"
        for entry in record["scores"]:
            entry["scores"] = [None if s is None else -s for s in entry["scores"]]

    forged = _write(cards["good"], tmp_path / "cards" / "zz-imp", noisy)
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    assert [line["judge"] for line in board_json(out)] == ["good"]
    assert [refusal["file"] for refusal in _refused(out)] == [str(forged)]
    assert "name the judge" not in capsys.readouterr().err
