"""A board merging one judge's cards trusts the judge record each card carries, and anyone can copy it: a forged
card of "good" with anti-correlated scores on a set the real cards did not score was merged and pulled good's
line down. Cards signed by their maker (judge card --sign-key-env) and a board told the key
(--merge-key-env) merge only signed cards; the copy is its own line, and good's line keeps its numbers."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evalkit.judgecard import write_card
from evalkit.judgecard.cli import main
from evalkit.judgecard.signing import sign, signing_key, verify
from tests.judgecard.test_board_provenance import _per_set, _write, inputs  # noqa: F401 (a fixture)
from tests.judgecard.test_leaderboard import _board_of, board_json

KEY = "board-key-0123456789"


def test_only_signed_cards_merge_and_a_forged_copy_cannot_move_the_line(inputs, tmp_path, monkeypatch, capsys):
    sets, judges, _ = inputs
    monkeypatch.setenv("EVALKIT_CARD_KEY", KEY)
    key = signing_key("EVALKIT_CARD_KEY")
    honest_one, _ = write_card(_per_set("good", judges["good"], sets, "one"), tmp_path / "cards" / "good-one", key=key)
    honest_two, _ = write_card(_per_set("good", judges["good"], sets, "two"), tmp_path / "cards" / "good-two", key=key)
    assert verify(json.loads(honest_one.read_text()), key)
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "alone", "--merge",
                     "--merge-key-env", "EVALKIT_CARD_KEY") == 0
    alone = {r["judge"]: r for r in board_json(tmp_path / "alone")}["good"]
    # The forger scores set two with good's scores turned around, copies the honest card's judge record and
    # signature into that card, and hands it in in place of the honest set-two card: the signature no longer
    # matches what the card holds.
    honest = json.loads(honest_two.read_text())
    turned = {name: -np.asarray(values) for name, values in judges["good"].items()}
    forged = json.loads(_per_set("good", turned, sets, "two").to_json())
    forged.update(judge=honest["judge"], spec=honest["spec"], signature=honest["signature"])
    (tmp_path / "cards" / "good-two" / "card.json").write_text(json.dumps(forged))
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board", "--merge",
                     "--merge-key-env", "EVALKIT_CARD_KEY") == 0
    printed = capsys.readouterr()
    assert "good-two/card.json names the judge 'good' but is not signed" in printed.err
    assert KEY not in printed.out + printed.err
    lines = {r["judge"]: r for r in board_json(tmp_path / "board")}
    signed = next(r for name, r in lines.items() if r["card"] == str(honest_one))
    copy = next(r for name, r in lines.items() if "good-two" in r["card"])
    assert signed["card"] == str(honest_one) and copy["judge"] != signed["judge"]
    assert signed["mean_pearson"] > 0 > copy["mean_pearson"]  # the copy is shown apart, not mixed in
    # Without the key, the same folder merges the forged row into good's line: what the key prevents.
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "open", "--merge") == 0
    opened = {r["judge"]: r for r in board_json(tmp_path / "open")}["good"]
    assert opened["mean_pearson"] < alone["mean_pearson"]
    for path in (tmp_path / "board").rglob("*"):
        assert not path.is_file() or KEY not in path.read_text(errors="replace")


def test_a_signature_covers_every_field_and_the_key_must_be_set(inputs, tmp_path, monkeypatch):
    sets, judges, cards = inputs
    record = json.loads(cards["good"].to_json())
    record["signature"] = sign(record, b"k" * 16)
    assert verify(record, b"k" * 16)
    for field, value in (("judge", "better"), ("half", "dev"), ("seed", 1)):
        assert not verify({**record, field: value}, b"k" * 16), field
    monkeypatch.delenv("EVALKIT_CARD_KEY", raising=False)
    with pytest.raises(ValueError, match="EVALKIT_CARD_KEY is unset"):
        signing_key("EVALKIT_CARD_KEY")
    monkeypatch.setenv("EVALKIT_CARD_KEY", "short")
    with pytest.raises(ValueError, match="too short") as error:
        signing_key("EVALKIT_CARD_KEY")
    assert "short" not in str(error.value).replace("too short", "")
    assert main(["leaderboard", "--cards", str(tmp_path), "--merge-key-env", "EVALKIT_CARD_KEY"]) == 2


def test_a_card_swapped_between_reads_is_judged_on_what_was_read(inputs, tmp_path, monkeypatch, capsys):
    """The board read a card, then read its file again to check the signature, so a file
    swapped between the reads (a forged card, then a signed copy) merged unsigned. The signature is checked on
    the record the card came from."""
    from pathlib import Path

    sets, judges, _ = inputs
    monkeypatch.setenv("EVALKIT_CARD_KEY", KEY)
    key = signing_key("EVALKIT_CARD_KEY")
    write_card(_per_set("good", judges["good"], sets, "one"), tmp_path / "cards" / "good-one", key=key)
    signed_two, _ = write_card(_per_set("good", judges["good"], sets, "two"), tmp_path / "other", key=key)
    turned = {name: -np.asarray(values) for name, values in judges["good"].items()}
    forged = _write(_per_set("good", turned, sets, "two"), tmp_path / "cards" / "evil")
    reads, real_read = {"n": 0}, Path.read_text

    def swapping(path, *args, **kwargs):  # the first read sees the forged card, every later one a signed copy
        if Path(path) == forged:
            reads["n"] += 1
            return real_read(forged if reads["n"] == 1 else signed_two, *args, **kwargs)
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", swapping)
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board", "--merge",
                     "--merge-key-env", "EVALKIT_CARD_KEY") == 0
    lines = board_json(tmp_path / "board")
    assert "evil/card.json names the judge 'good' but is not signed" in capsys.readouterr().err
    assert len(lines) == 2 and all("evil" not in r["card"] or r["mean_pearson"] < 0 for r in lines)


def test_with_the_key_the_signed_card_keeps_its_line_and_renamed_copies_count_once(inputs, tmp_path, monkeypatch,
                                                                                 capsys):
    """A signed card copied word for word under other judge names into folders that sort before it: told the key,
    the board keeps the signed card's line (its file, its judge's name alone) and counts each unsigned copy once, named;
    no copy stands as a second line with the same scores, and none takes the line."""
    sets, judges, _ = inputs
    monkeypatch.setenv("EVALKIT_CARD_KEY", KEY)
    key = signing_key("EVALKIT_CARD_KEY")
    honest, _ = write_card(_per_set("good", judges["good"], sets, "one"), tmp_path / "cards" / "zz-good", key=key)
    record = json.loads(honest.read_text())
    for folder, name in (("aa-copy", "mallory"), ("ab-copy", "trent")):
        (tmp_path / "cards" / folder).mkdir()
        (tmp_path / "cards" / folder / "card.json").write_text(json.dumps({**record, "judge": name}))
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board", "--merge",
                     "--merge-key-env", "EVALKIT_CARD_KEY") == 0
    err = capsys.readouterr().err
    lines = board_json(tmp_path / "board")
    assert len(lines) == 1 and lines[0]["card"].startswith(str(honest)) and lines[0]["judge"] == "good", lines
    once = json.loads((tmp_path / "board" / "leaderboard.json").read_text())["copies_counted_once"]
    assert {(Path(c["file"]).parent.name, c["same_as"]) for c in once} == {("aa-copy", str(honest)),
                                                                           ("ab-copy", str(honest))}
    assert "the one signed with EVALKIT_CARD_KEY's key" in err and KEY not in err
    assert "keeps a card signed with it" in (tmp_path / "board" / "leaderboard.md").read_text()
