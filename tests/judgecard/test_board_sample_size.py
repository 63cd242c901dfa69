"""The board fixes a sampled card's size as well as its seed, and counts a copied card once.

* A card's items on a set had to be the half or the kit's sample drawn with the board's seed, but the card's
  maker chose the size: the seeded order of contexts is public, so scoring every prefix and keeping the best
  one chose the agreement. The board now accepts the whole half or the sample sizes it is given
  (``judge leaderboard --items-per-set N``; none given: the whole half only); a card sampled at another size
  is shown, flagged with its file, the set and both sizes, and not ranked.
* A signed card copied into a second folder made a merged board refuse the judge's line ("sets scored twice"):
  a card that is word for word another is counted once, both files named; two different cards of one judge
  on one set are still refused.
"""
from __future__ import annotations

import json

import numpy as np

from evalkit.judgecard import judge_card, write_card
from evalkit.judgecard.leaderboard import standings
from evalkit.judgecard.signing import signing_key
from tests.judgecard.test_board_provenance import _per_set, _write, inputs  # noqa: F401 (a fixture)
from tests.judgecard.test_leaderboard import _board_of, board_json, column_judge

KEY = "board-key-0123456789"
SAMPLE_SIZE = "sampled at a size this board does not accept"  # how the flag begins (verify.SAMPLE_SIZE)


def _sampled(name: str, values: dict, sets, size: int, seed: int):
    return judge_card(column_judge(name, values), list(sets.values()), half="all", bootstrap=0,
                      items_per_set=size, seed=seed)


def test_the_board_accepts_only_its_own_sample_size(inputs, tmp_path, monkeypatch, capsys):
    sets, judges, _ = inputs
    at_board = _write(_sampled("at the board's size", judges["good"], sets, 40, seed=7), tmp_path / "cards" / "a")
    shopped = _write(_sampled("shopped size", judges["weak"], sets, 70, seed=7), tmp_path / "cards" / "b")
    _write(judge_card(column_judge("whole", judges["weak"]), list(sets.values()), half="all", bootstrap=0),
           tmp_path / "cards" / "c")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board", "--seed", "7",
                     "--items-per-set", "40") == 0
    lines = {r["judge"]: r for r in board_json(tmp_path / "board")}
    assert lines["at the board's size"]["rank"] >= 1 and not lines["at the board's size"]["flags"]
    assert lines["whole"]["rank"] >= 1  # a card that scores every item chose nothing
    line = lines["shopped size"]
    assert line["rank"] == 0 and SAMPLE_SIZE in line["flags"], line
    sizes = {name: len(sets[name].sample(n, seed=7).items) for name in sets for n in (40, 70)}
    assert str(shopped) in line["flags"] and "on one holds" in line["flags"] and "its sample of 40" in line["flags"]
    assert f"holds {len(sets['one'].sample(70, seed=7).items)} items" in line["flags"]
    assert f"its sample of 40 ({len(sets['one'].sample(40, seed=7).items)} items)" in line["flags"], sizes
    assert "shopped size is not ranked: " + SAMPLE_SIZE in capsys.readouterr().err
    assert str(at_board) not in " ".join(r["flags"] for r in lines.values())


def test_a_board_given_no_size_accepts_whole_halves_only(inputs, tmp_path, monkeypatch):
    sets, judges, _ = inputs
    _write(_sampled("sampled", judges["good"], sets, 40, seed=0), tmp_path / "cards" / "a")
    _write(judge_card(column_judge("whole", judges["weak"]), list(sets.values()), half="all", bootstrap=0),
           tmp_path / "cards" / "b")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    lines = {r["judge"]: r for r in board_json(tmp_path / "board")}
    assert lines["whole"]["rank"] == 1 and lines["sampled"]["rank"] == 0
    assert "the board accepts the whole half (120 items):" in lines["sampled"]["flags"], lines["sampled"]


def test_standings_fix_the_size_and_a_board_not_told_accepts_one_shared_size_only(inputs):
    from evalkit.judgecard import verify

    assert verify.SAMPLE_SIZE == SAMPLE_SIZE
    sets, judges, _ = inputs
    forty, seventy = (_sampled(f"on {n}", judges["good"], sets, n, seed=3) for n in (40, 70))
    board = {s.judge: s for s in standings([forty, seventy], sets, bootstrap=20, seed=3, items_per_set=70,
                                           sources={"on 40": "cards/forty/card.json"})}
    assert board["on 70"].rank == 1 and not board["on 70"].flags
    one, two = [f for f in board["on 40"].flags if f.startswith(SAMPLE_SIZE)]  # a flag per set
    assert " on one holds " in one and " on two holds " in two
    flag = one
    assert "cards/forty/card.json" in flag and "its sample of 70" in flag
    # Not told, the board accepts the one size its sampled cards share, and none where they differ.
    assert not standings([forty], sets, bootstrap=20, seed=3)[0].flags
    both = standings([forty, seventy], sets, bootstrap=20, seed=3)
    assert all(s.rank == 0 and any("given no sample size" in f for f in s.flags) for s in both), both
    assert standings([forty, seventy], sets, bootstrap=20, seed=3, items_per_set=(40, 70))[0].flags == ()


def test_a_signed_card_copied_into_a_second_folder_is_counted_once(inputs, tmp_path, monkeypatch, capsys):
    sets, judges, _ = inputs
    monkeypatch.setenv("EVALKIT_CARD_KEY", KEY)
    key = signing_key("EVALKIT_CARD_KEY")
    one, _ = write_card(_per_set("good", judges["good"], sets, "one"), tmp_path / "cards" / "good-one", key=key)
    two, _ = write_card(_per_set("good", judges["good"], sets, "two"), tmp_path / "cards" / "good-two", key=key)
    copy = tmp_path / "cards" / "zz-backup" / "card.json"
    copy.parent.mkdir()
    copy.write_bytes(one.read_bytes())
    for more in (("--merge", "--merge-key-env", "EVALKIT_CARD_KEY"), ("--merge",)):
        out = tmp_path / f"board{len(more)}"
        assert _board_of(tmp_path / "cards", sets, monkeypatch, out, *more) == 0, capsys.readouterr().err
        error = capsys.readouterr().err
        assert f"{copy} holds the same card as {one}" in error and "scored twice" not in error, error
        (line,) = board_json(out)
        assert line["judge"] == "good" and line["card"] == f"{one}, {two}" and line["ceiling_rows"] == 2
        record = json.loads((out / "leaderboard.json").read_text())
        assert record["copies_counted_once"] == [{"file": str(copy), "same_as": str(one)}]
        assert record["refused_cards"] == []
        assert "zz-backup/card.json: the same card as" in (out / "leaderboard.md").read_text()
    # Without --merge a copy is not a second line either.
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "lines") == 0
    assert sorted(r["card"] for r in board_json(tmp_path / "lines")) == [str(one), str(two)]


def test_two_different_cards_of_one_judge_on_one_set_are_still_refused(inputs, tmp_path, monkeypatch, capsys):
    sets, judges, _ = inputs
    changed = {name: np.array(values, dtype=float) for name, values in judges["good"].items()}
    changed["one"][0] += 1.0  # one score changed, the card made again from it: its rows match its scores

    one = _write(_per_set("good", judges["good"], sets, "one"), tmp_path / "cards" / "good-one")
    edited = _write(_per_set("good", changed, sets, "one"), tmp_path / "cards" / "good-edited")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board", "--merge") == 2
    error = capsys.readouterr().err
    assert "sets scored twice: one" in error and str(one) in error and str(edited) in error, error
    assert "holds the same card" not in error
