"""What a hostile card maker can put in a card's text fields: a set or a label given as a list, a half of
megabytes or of another type, a spec of megabytes or not an object, an empty judge name. Each stopped the whole
board (``unhashable type: 'list'``), made a refusal of megabytes, or was copied onto a page of megabytes, or
showed a judge with no name. A card reads them back checked (:meth:`Card.from_record`): the card is refused by file
and field, and the board ranks the others."""
from __future__ import annotations

import json
import re

import pytest

from evalkit.judgecard import judge_card
from evalkit.judgecard.card import Card
from tests.judgecard.test_board_probe import _refused, inputs  # noqa: F401  (the module's fixture)
from tests.judgecard.test_leaderboard import _board_of, board_json
from tests.judgecard.test_leaderboard import _edited as _write

_BIG = 3 * 2**20  # characters: a field of megabytes
MAX_SPEC_CHARS = 64 * 1024  # the longest spec a card holds, as JSON (evalkit.judgecard.card_fields.MAX_SPEC_CHARS)


def _first(name, **change):
    return lambda record: record[name][0].update(change)


@pytest.mark.parametrize("edit, field, said", [
    (_first("rows", set=["one"]), "rows[0]", "'set' is ['one'], not a text"),
    (_first("rows", label=["score"]), "rows[0]", "'label' is ['score'], not a text"),
    (_first("rows", ceiling_note=["a", "note"]), "rows[0]", "'ceiling_note' is ['a', 'note'], not a text"),
    (_first("rows", set="s" * 201), "rows[0]", "'set': 201 characters, more than 200"),
    (_first("costs", set=["x"]), "costs[0]", "'set' is ['x'], not a text"),
    (_first("costs", examples="<b>ab</b>"), "costs[0]", "'examples' is '<b>ab</b>', not a list of [item, text]"),
    (_first("costs", examples=[["one0", ["raw"]]]), "costs[0]", "'examples[0]' is ['one0', ['raw']], not an [item, "
                                                                "text] pair"),
    (_first("scores", set=["one"]), "scores[0]", "'set' is ['one'], not a text"),
    (lambda r: r.update(half="H" * _BIG), "half", "'HHHH"),
    (lambda r: r.update(half={"a": 1}), "half", "{'a': 1} is not a half a card reports (test, dev or all)"),
    (lambda r: r.update(half="train"), "half", "'train' is not a half a card reports"),
    (lambda r: r["spec"].update(name="N" * _BIG), "spec", f"its JSON is {_BIG + 37:,} characters long"),
    (lambda r: r["spec"].update(template="T" * MAX_SPEC_CHARS), "spec", "more than 65,536 (MAX_SPEC_CHARS)"),
    (lambda r: r.update(spec=[["kind", "length"]]), "spec", "[['kind', 'length']] is not a JSON object"),
    (lambda r: r.update(judge=""), "judge", "the judge's name '' is empty or white space only"),
    (lambda r: r.update(judge=" \t\n "), "judge", "is empty or white space only"),
    (lambda r: r.update(judge=["a", "b"]), "judge", "['a', 'b'] is not a text"),
], ids=["rows-set-list", "rows-label-list", "rows-note-list", "rows-set-long", "costs-set-list", "examples-text",
        "examples-nested", "scores-set-list", "half-3MB", "half-object", "half-unknown", "spec-name-3MB",
        "spec-template-64KiB", "spec-a-list", "judge-empty", "judge-white-space", "judge-a-list"])
def test_a_hostile_text_field_refuses_its_card_by_file_and_field_and_the_others_are_ranked(
        inputs, tmp_path, monkeypatch, capsys, edit, field, said):  # noqa: F811
    sets, cards = inputs
    _write(cards["good"], tmp_path / "cards" / "good")
    bad = _write(cards["weak"], tmp_path / "cards" / "bad", edit)
    out = tmp_path / "board"
    assert _board_of(tmp_path / "cards", sets, monkeypatch, out) == 0
    error = capsys.readouterr().err
    (refused,) = _refused(out)
    assert refused["file"] == str(bad) and refused["reason"].startswith(f"field '{field}': "), refused
    assert said in refused["reason"], refused["reason"]
    assert "Traceback" not in error and f"{bad}: {refused['reason']}" in error and len(error) < 10_000
    assert [line["judge"] for line in board_json(out)] == ["good"]
    assert sum(path.stat().st_size for path in out.rglob("*") if path.is_file()) < 1_000_000


def test_a_half_or_a_spec_refused_needs_no_half_option_and_the_board_ranks_the_half_of_the_others(
        inputs, tmp_path, monkeypatch, capsys):  # noqa: F811
    """A card whose half was an object made the board ask for --half ("the cards report different halves (test,
    {'a': 1})"): no board at all."""
    sets, cards = inputs
    _write(cards["good"], tmp_path / "cards" / "good")
    _write(cards["weak"], tmp_path / "cards" / "bad", lambda r: r.update(half=["test"]))
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    assert "different halves" not in capsys.readouterr().err
    (refused,) = _refused(tmp_path / "board")
    assert refused["reason"] == "field 'half': ['test'] is not a half a card reports (test, dev or all)"


@pytest.mark.parametrize("edit, field", [
    (lambda r: r.update(consistency=[{"set": ["one"], "draws": 3, "source": "seeds", "n": 4, "item_sd": 0.1,
                                      "between_draws": 0.9, "label": "score", "pearson_min": 0.1,
                                      "pearson_max": 0.2}]), r"consistency\[0\]': 'set' is \['one'\], not a text"),
    (lambda r: r.update(consistency=[{"set": "one", "draws": 3, "source": {"a": 1}, "n": 4, "item_sd": 0.1,
                                      "between_draws": 0.9, "label": "score", "pearson_min": 0.1,
                                      "pearson_max": 0.2}]), r"consistency\[0\]': 'source' is \{'a': 1\}, not a text"),
    (lambda r: r.update(slots=[{"set": ["one"], "pairs": 3, "first_slot": 0.5, "first_slot_low": 0.1,
                                "first_slot_high": 0.9, "flip": 0.1, "flip_low": 0.0, "flip_high": 0.3}]),
     r"slots\[0\]': 'set' is \['one'\], not a text"),
    (lambda r: r.update(curves=[{"set": ["one"], "budget": "all", "pearson": 0.4}]),
     r"curves\[0\]': 'set' is \['one'\], not a text"),
    (lambda r: r.update(curves=[{"set": "one", "budget": "all", "x": {"y": [1]}}]),
     r"curves\[0\]': 'x' is \{'y': \[1\]\}, not a text, a number or null"),
    (lambda r: r.update(curves=[[["set", "one"]]]), r"curves\[0\]': \[\['set', 'one'\]\] is not a JSON object"),
    (lambda r: r.update(curves=[{"set": "one", "label": "l" * 201}]), r"curves\[0\]': 'label': 201 characters"),
    (lambda r: r["rows"][0].update(ceiling_note="n" * 4001), r"rows\[0\]': 'ceiling_note': 4,001 characters"),
], ids=["consistency-set", "consistency-source", "slots-set", "curves-set", "curves-nested", "curves-pairs",
        "curves-label-long", "ceiling-note-long"])
def test_every_text_field_of_slots_consistency_and_curves_is_a_bounded_text(inputs, edit, field):  # noqa: F811
    _, cards = inputs
    record = json.loads(cards["good"].to_json())
    edit(record)
    with pytest.raises(ValueError, match=rf"^bad\.json, field '{field}"):
        Card.from_record(record, source="bad.json")


def test_a_card_as_made_reads_back_whole(inputs):  # noqa: F811
    """The checks refuse nothing the kit writes: a card, its curve rows and cost examples included, reads back
    equal."""
    _, cards = inputs
    record = json.loads(cards["good"].to_json())
    record["curves"] = [{"set": "one", "budget": "all", "k": 20, "draws": 3, "pearson": 0.4, "gain": None,
                         "label": "score", "fell_back": 0.0, "n": 60}]
    record["costs"][0]["examples"] = [["one3", "no number in the reply"]]
    card = Card.from_record(record, source="ok.json")
    assert json.loads(card.to_json()) == record
    from evalkit.judgecard import card_fields

    assert card_fields.MAX_SPEC_CHARS == MAX_SPEC_CHARS
    assert card.half == "all" and card.spec == record["spec"]


def test_a_card_is_never_made_with_a_spec_a_board_refuses(inputs, tmp_path):  # noqa: F811
    sets, _ = inputs
    spec = tmp_path / "judge.yml"
    spec.write_text(json.dumps({"kind": "lm", "name": "long-prompt", "backend": "openai", "model": "m",
                                "base_url": "http://127.0.0.1:9/v1", "labels": ["1", "2"],
                                "template": "Reply: {candidate}\n" + "Be fair. " * 8000}))
    with pytest.raises(ValueError, match=re.escape("judge card, the judge's spec: its JSON is ")):
        judge_card(str(spec), list(sets.values()), half="all", bootstrap=0)
