"""The leaderboard command's lines and what it leaves out: each card file is its own line unless the board is told
to merge (--merge), so a copied judge record cannot move another judge's line; the pages it links show only what
it recomputed; a share whose interval reaches the human ceiling is marked; a card it cannot read or check is left
out and listed while the others are ranked; a symbolic link, to a card.json or a folder, is named and never
followed."""
from __future__ import annotations

import argparse
import json
import os
from dataclasses import replace

import numpy as np
import pytest

from evalkit.judgecard import judge_card, write_card
from evalkit.judgecard.card_records import SetCost
from evalkit.judgecard.cardfiles import LINK
from evalkit.judgecard.cli import add_arguments
from evalkit.judgecard.ceiling_checks import AT_CEILING
from evalkit.judgecard.board_pages import board_sentence, leaderboard_markdown
from evalkit.judgecard.leaderboard import standings, standings_frame
from tests.judgecard.test_leaderboard import _board_of, board_json, column_judge, people_set
from tests.judgecard.test_leaderboard import _edited as _write


@pytest.fixture(scope="module")
def inputs():
    sets = {name: people_set(name, seed=k) for k, name in enumerate(("one", "two"))}
    rng = np.random.default_rng(21)
    truth = {n: s.items["truth"].to_numpy() for n, s in sets.items()}
    judges = {"victim": {n: t + rng.normal(scale=2.5, size=len(t)) for n, t in truth.items()},
              "weak": {n: t + rng.normal(scale=2.0, size=len(t)) for n, t in truth.items()},
              # the human scores plus noise: about as close to them as the true score is
              "near": {n: s.items["score"].to_numpy() + rng.normal(scale=0.45, size=len(s.items))
                       for n, s in sets.items()}}
    return sets, judges


def _card(name, values, sets, only=None):
    return judge_card(column_judge(name, values), [sets[only]] if only else list(sets.values()), half="all",
                      bootstrap=0)


def _leaderboard(tmp_path, sets, monkeypatch, entries, out, *more):
    """The command on several --cards entries (``_board_of`` takes one)."""
    args = [part for entry in entries[1:] for part in ("--cards", str(entry))]
    return _board_of(entries[0], sets, monkeypatch, out, *args, *more)


# --------------------------------------------------------------------------- 1. one line per card file

def test_a_copied_judge_record_on_another_set_is_its_own_line_unless_merge_is_asked(inputs, tmp_path, monkeypatch,
                                                                                    capsys):
    """A valid card on set two whose scores are the labels plus noise, with the judge, spec, half, bootstrap and
    seed of the victim's card (set one only), was merged into the victim's line: its mean share went from the
    victim's own to near 1 over two rows, ranked 1, the only trace a second file name. By default each card file
    is its own line, the two told apart by their folder; --merge (asked for) makes one line naming both files."""
    sets, judges = inputs
    victim = _write(_card("probe-a", judges["victim"], sets, "one"), tmp_path / "cards" / "a")
    record = json.loads(victim.read_text())
    hijack = _write(_card("forger", judges["near"], sets, "two"), tmp_path / "forged" / "zz_hijack",
                    lambda r: r.update({key: record[key] for key in ("judge", "spec", "half", "bootstrap", "seed")}))
    weak = _write(_card("weak", judges["weak"], sets), tmp_path / "cards" / "weak")
    entries = [victim.parent, hijack.parent, weak.parent]
    assert _leaderboard(tmp_path, sets, monkeypatch, entries, tmp_path / "board") == 0
    printed = capsys.readouterr()
    lines = {r["judge"]: r for r in board_json(tmp_path / "board")}
    alone = {s.judge: s for s in standings([_card("probe-a", judges["victim"], sets, "one")], sets, bootstrap=50)}
    assert set(lines) == {f"probe-a ({victim.parent})", f"probe-a ({hijack.parent})", "weak"}
    line = lines[f"probe-a ({victim.parent})"]
    assert line["ceiling_rows"] == 1 and line["card"] == str(victim)
    assert line["mean_share"] == pytest.approx(alone["probe-a"].mean_share)
    assert lines[f"probe-a ({hijack.parent})"]["card"] == str(hijack)
    assert "2 card files name the judge 'probe-a'" in printed.err and "--merge" in printed.err
    table = (tmp_path / "board" / "leaderboard.md").read_text()
    assert f"probe-a ({victim.parent})" in table.replace("\\", "")
    # Asked to merge, the board makes one line of both files, and names both.
    assert _leaderboard(tmp_path, sets, monkeypatch, entries, tmp_path / "merged", "--merge") == 0
    merged = {r["judge"]: r for r in board_json(tmp_path / "merged")}
    assert set(merged) == {"probe-a", "weak"} and merged["probe-a"]["card"] == f"{victim}, {hijack}"
    assert merged["probe-a"]["ceiling_rows"] == 2


def test_merge_is_documented_in_the_commands_help():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    text = " ".join(parser.format_help().split())
    assert "--merge" in text and "Each card file is its own line" in text


# --------------------------------------------------------------------------- 2. the pages the command writes

def test_the_commands_card_pages_show_only_what_the_board_recomputed(inputs, tmp_path, monkeypatch):
    """The command wrote each card's page as the card records it: a row on a set the board does not hold
    (myprivate, Pearson 0.99) and negative or huge costs were shown as figures. Its pages are the board's:
    recomputed rows only, the unchecked set named without its numbers, no cost table."""
    sets, judges = inputs
    card = _card("weak", judges["weak"], sets)
    private = replace(card.rows[0], set="myprivate", pearson=0.987654, spearman=0.976543, share=3.21098)
    costs = (SetCost("one", 120, -123.456, 7, 0, 5, 6, -9.87, 98765.4321, 0, ()),)
    _write(replace(card, rows=(*card.rows, private), costs=costs), tmp_path / "cards" / "weak")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    (page,) = [path.read_text() for path in (tmp_path / "board" / "cards").rglob("card.html")]
    for forged in ("0.988", "0.977", "3.211", "-123.456", "98765", "-9.870"):
        assert forged not in page, forged
    assert "Recomputed by the leaderboard" in page and "<li>myprivate</li>" in page
    assert "myprivate / score" not in page  # no bar, no row of its figures
    for row in card.rows:
        assert f"<td>{row.pearson:.3f}</td>" in page
    assert not list((tmp_path / "board" / "cards").rglob("card.json"))  # no copy of the card's own figures


# --------------------------------------------------------------------------- 3. at the human ceiling

def test_a_share_whose_interval_reaches_the_ceiling_stays_ranked_and_is_marked(inputs, tmp_path, monkeypatch,
                                                                               capsys):
    """Human scores plus noise ranked first at a share of about 1, unflagged: a share whose 95% interval reaches 1
    is as close to people as another rater. It keeps its rank and is marked in the table, the JSON and the
    sentence; a judge well below the ceiling is not."""
    sets, judges = inputs
    near, weak = _card("near", judges["near"], sets), _card("weak", judges["weak"], sets)
    board = {s.judge: s for s in standings([weak, near], sets, bootstrap=200)}
    assert board["near"].rank == 1 and not board["near"].flags and board["near"].share_high >= 1
    assert board["near"].cautions[0].startswith(AT_CEILING) and board["weak"].cautions == ()
    assert board["weak"].rank == 2 and board["weak"].share_high < 1
    table = leaderboard_markdown(list(board.values()))
    assert "| 1 | near |" in table and "at the human ceiling: as close to people as another rater" in table
    assert "Ranked, but marked: near (at the human ceiling" in board_sentence(list(board.values()))
    assert standings_frame(list(board.values())).set_index("judge").loc["near", "cautions"].startswith(AT_CEILING)
    for name, card in (("near", near), ("weak", weak)):
        write_card(card, tmp_path / "cards" / name)
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    assert "note: near is ranked, but at the human ceiling" in capsys.readouterr().err
    record = {r["judge"]: r for r in board_json(tmp_path / "board")}
    assert record["near"]["rank"] == 1 and record["near"]["flags"] == ""
    assert record["near"]["cautions"].startswith(AT_CEILING) and record["weak"]["cautions"] == ""
    assert "Ranked, but marked: near" in (tmp_path / "board" / "leaderboard.md").read_text()


# --------------------------------------------------------------------------- 4. a bad card leaves the others ranked

def test_cards_that_cannot_be_merged_are_left_out_and_the_others_ranked(inputs, tmp_path, monkeypatch, capsys):
    """Two cards of one judge name whose stored judge records differ, asked to merge, stopped the whole board:
    both are left out, each named with why, and the other judge's board is written (exit 0)."""
    sets, judges = inputs
    first = _write(_card("twin", judges["victim"], sets, "one"), tmp_path / "cards" / "twin-one")
    second = _write(_card("twin", judges["near"], sets, "two"), tmp_path / "cards" / "twin-two",
                    lambda r: r["spec"].update(path="another.yml"))
    _write(_card("weak", judges["weak"], sets), tmp_path / "cards" / "weak")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board", "--merge") == 0
    err = capsys.readouterr().err
    assert f"refused, left out of the board: {first}: not merged with {second}" in err and "differ in spec" in err
    refused = json.loads((tmp_path / "board" / "leaderboard.json").read_text())["refused_cards"]
    assert [r["file"] for r in refused] == [str(first), str(second)]
    assert [r["judge"] for r in board_json(tmp_path / "board")] == ["weak"]


def test_a_card_that_is_not_json_is_left_out_and_the_others_ranked(inputs, tmp_path, monkeypatch, capsys):
    sets, judges = inputs
    _write(_card("weak", judges["weak"], sets), tmp_path / "cards" / "weak")
    (tmp_path / "cards" / "broken").mkdir()
    (tmp_path / "cards" / "broken" / "card.json").write_text("{not json")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    assert "broken/card.json: not JSON" in capsys.readouterr().err
    (refusal,) = json.loads((tmp_path / "board" / "leaderboard.json").read_text())["refused_cards"]
    assert refusal["file"].endswith("broken/card.json") and refusal["reason"].startswith("not JSON")


def test_the_board_ranks_the_half_it_is_told_not_the_half_most_cards_report(inputs, tmp_path, monkeypatch, capsys):
    """The board ranked the half most cards reported, so two junk cards edited to "dev" got an honest test-half
    card refused. Cards that report different halves now need --half: the board ranks that half and names every
    card of another half as left out; without it the board stops and says so."""
    sets, judges = inputs
    _write(_card("weak", judges["weak"], sets), tmp_path / "cards" / "weak")
    _write(_card("victim", judges["victim"], sets), tmp_path / "cards" / "victim")
    other = _write(_card("near", judges["near"], sets), tmp_path / "cards" / "near", lambda r: r.update(half="dev"))
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 2
    assert "the cards report different halves (all, dev): say which half to rank with --half" in \
        capsys.readouterr().err
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board", "--half", "all") == 0
    assert f"{other}: reports the dev half; this board ranks the all half (--half)" in capsys.readouterr().err
    assert {r["judge"] for r in board_json(tmp_path / "board")} == {"weak", "victim"}
    # Two junk cards on "dev" do not outvote the honest one: the half is the board runner's.
    for name in ("junk1", "junk2"):
        _write(_card(name, judges["weak"], sets), tmp_path / "cards" / name, lambda r: r.update(half="dev"))
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "again", "--half", "all") == 0
    assert {r["judge"] for r in board_json(tmp_path / "again")} == {"weak", "victim"}


# --------------------------------------------------------------------------- 5. symbolic links

@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_symbolic_links_to_a_card_or_a_folder_are_named_and_never_followed(inputs, tmp_path, monkeypatch, capsys):
    """A card.json that was a link was followed (one to /etc/passwd: 'not JSON') while a linked folder was
    skipped silently: neither is followed, each is named in the refusals as a symbolic link, given or found."""
    sets, judges = inputs
    elsewhere = _write(_card("elsewhere", judges["victim"], sets), tmp_path / "elsewhere" / "x")
    own = _write(_card("weak", judges["weak"], sets), tmp_path / "cards" / "weak")
    (tmp_path / "cards" / "linked").mkdir()
    (tmp_path / "cards" / "linked" / "card.json").symlink_to(elsewhere)  # a valid card: still not read
    (tmp_path / "cards" / "passwd").mkdir()
    (tmp_path / "cards" / "passwd" / "card.json").symlink_to("/etc/passwd")
    (tmp_path / "cards" / "folder").symlink_to(elsewhere.parent, target_is_directory=True)
    (tmp_path / "cards" / "loop").symlink_to(tmp_path / "cards", target_is_directory=True)
    (tmp_path / "given.json").symlink_to(elsewhere)
    assert _leaderboard(tmp_path, sets, monkeypatch, [tmp_path / "cards", tmp_path / "given.json",
                                                      tmp_path / "cards" / "passwd"], tmp_path / "board") == 0
    err = capsys.readouterr().err
    listed = json.loads((tmp_path / "board" / "leaderboard.json").read_text())["refused_cards"]
    refused = {r["file"]: r["reason"] for r in listed}
    assert len(listed) == len(refused)  # a link met twice (its folder given twice) is listed once
    links = {str(tmp_path / "cards" / "linked" / "card.json"), str(tmp_path / "cards" / "passwd" / "card.json"),
             str(tmp_path / "cards" / "folder"), str(tmp_path / "cards" / "loop"), str(tmp_path / "given.json")}
    assert refused == {path: LINK for path in links}, refused
    assert all(f"{path}: a symbolic link" in err for path in links) and "not JSON" not in err, err
    lines = board_json(tmp_path / "board")
    assert [r["judge"] for r in lines] == ["weak"] and lines[0]["card"] == str(own)
    # Only links: nothing to rank, the input-error status.
    assert _board_of(tmp_path / "cards" / "passwd", sets, monkeypatch, tmp_path / "none") == 2
    assert "a symbolic link" in capsys.readouterr().err
