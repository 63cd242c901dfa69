"""What the leaderboard shows and where it comes from: each card file is its own line unless the board is told to
merge (--merge), and a card named like another judge is never merged into it; each line names its card file and
the fingerprint of its item scores; the pages the board writes show only what it recomputes; a share above the
human ceiling is flagged, not ranked first, and one whose interval reaches the ceiling is marked."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from evalkit.judgecard import Card, card_html, judge_card, merge_cards, write_card
from evalkit.judgecard.ceiling_checks import ABOVE_CEILING, _rating_stats, _resampled_ceilings
from evalkit.judgecard.leaderboard import board_card, scores_fingerprint, standings, standings_frame, write_board_card
from evalkit.judgecard.board_pages import board_sentence, leaderboard_html, leaderboard_markdown
from evalkit.judgecard.sets import noise_ceiling
from tests.judgecard.test_leaderboard import _board_of, board_json, column_judge, people_set
from tests.judgecard.test_leaderboard import _edited as _write


@pytest.fixture(scope="module")
def inputs():
    sets = {name: people_set(name, seed=k) for k, name in enumerate(("one", "two"))}
    rng = np.random.default_rng(11)
    truth = {n: s.items["truth"].to_numpy() for n, s in sets.items()}
    judges = {"good": {n: t + rng.normal(scale=0.6, size=len(t)) for n, t in truth.items()},
              "weak": {n: t + rng.normal(scale=2.0, size=len(t)) for n, t in truth.items()}}
    cards = {name: judge_card(column_judge(name, values), list(sets.values()), half="all", bootstrap=0)
             for name, values in judges.items()}
    return sets, judges, cards


def _per_set(name: str, values: dict, sets, only: str) -> Card:
    return judge_card(column_judge(name, values), [sets[only]], half="all", bootstrap=0)


# --------------------------------------------------------------------------- one name, two judges

def test_a_card_of_another_judge_with_the_same_name_is_refused_naming_both_files(inputs, tmp_path, monkeypatch,
                                                                                 capsys):
    """A card whose judge was named "good" by someone else, on a set the real "good" card does not hold, was
    merged into good's line and moved it: cards whose stored judge record differs are two judges, and with
    --merge both are left out, naming both files."""
    sets, judges, _ = inputs
    honest = _write(_per_set("good", judges["good"], sets, "one"), tmp_path / "cards" / "good-one")
    rng = np.random.default_rng(0)
    other = {n: rng.normal(size=120) for n in sets}
    hijack = _write(_per_set("good", other, sets, "two"), tmp_path / "cards" / "other",
                    lambda r: r["spec"].update(name="good", path="someone-elses-judge.yml"))
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board", "--merge") == 2
    error = capsys.readouterr().err
    assert str(honest) in error and str(hijack) in error and "differ in spec" in error, error
    assert "two judges with one name" in error and not (tmp_path / "board").exists()


def test_a_card_with_the_same_name_on_a_set_the_judge_scored_is_refused(inputs, tmp_path, monkeypatch, capsys):
    """A copied card of "good" with its costs emptied and other scores on set one was merged (only the costs were
    compared), and the line read whichever scores came first: a set on two cards is refused, however it is held."""
    sets, judges, cards = inputs
    first = _write(cards["good"], tmp_path / "cards" / "good")
    rng = np.random.default_rng(1)
    copied = _write(_per_set("good", {"one": rng.normal(size=120)}, sets, "one"), tmp_path / "cards" / "copy",
                    lambda r: r.update(costs=[]))
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board", "--merge") == 2
    error = capsys.readouterr().err
    assert str(first) in error and str(copied) in error and "sets scored twice: one" in error, error


def test_one_judges_cards_on_different_sets_merge_when_asked_and_the_line_names_every_file(inputs, tmp_path,
                                                                                          monkeypatch):
    """--merge makes one judge's per-set cards (same name, same stored judge record) one line: it lists the files
    it was merged from, and every line carries the fingerprint of its item scores."""
    sets, judges, cards = inputs
    files = [_write(_per_set("good", judges["good"], sets, name), tmp_path / "cards" / f"good-{name}") for name in sets]
    _write(cards["weak"], tmp_path / "cards" / "weak")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board", "--merge") == 0
    record = {r["judge"]: r for r in board_json(tmp_path / "board")}
    assert record["good"]["card"] == ", ".join(map(str, files)) and record["good"]["ceiling_rows"] == 2
    merged = merge_cards([_per_set("good", judges["good"], sets, name) for name in sets])
    assert record["good"]["fingerprint"] == scores_fingerprint(merged) != record["weak"]["fingerprint"]
    table = (tmp_path / "board" / "leaderboard.md").read_text()
    assert f"{files[0]}, {files[1]}; scores {scores_fingerprint(merged)} |" in table.replace("\\", "")


def test_two_judges_that_print_the_same_name_are_two_lines_told_apart(inputs, tmp_path, monkeypatch):
    """A judge named "good\\n" prints as "good": it is its own line, with its own file and fingerprint beside
    good's, in the tables, the JSON and the command's leaderboard.md."""
    sets, judges, cards = inputs
    twin = replace(cards["weak"], judge="good\n")
    board = standings([cards["good"], twin], sets, bootstrap=50, sources={"good": "a/card.json",
                                                                           "good\n": "b/card.json"})
    cells = {s.judge: (s.card, s.fingerprint) for s in board}
    assert cells == {"good": ("a/card.json", scores_fingerprint(cards["good"])),
                     "good\n": ("b/card.json", scores_fingerprint(twin))}
    assert scores_fingerprint(cards["good"]) != scores_fingerprint(twin)
    page = leaderboard_html(board)
    assert page.count("<td>good") == 2 and "a/card.json; scores" in page and "b/card.json; scores" in page
    assert set(standings_frame(board)["card"]) == {"a/card.json", "b/card.json"}
    _write(cards["good"], tmp_path / "cards" / "good")
    _write(twin, tmp_path / "cards" / "twin")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    lines = (tmp_path / "board" / "leaderboard.md").read_text().split("\n\n")[0].splitlines()[2:]
    assert len(lines) == 2 and any("twin/card.json" in line for line in lines) and \
        any("cards/good/card.json" in line for line in lines)


# --------------------------------------------------------------------------- pages the board writes

def _forged(card: Card) -> Card:
    """``card`` with every field the board does not check raised, a row on a set the board does not hold and
    notes that are markup."""
    rows = tuple(replace(row, share=4.321, ceiling=0.123, pearson_low=0.777, pearson_high=0.778, one_person=0.654,
                         ceiling_note="made up", length_partial=-0.555, at_ceiling=True) for row in card.rows)
    elsewhere = replace(card.rows[0], set="elsewhere", pearson=0.999, share=9.876)
    return replace(card, rows=(*rows, elsewhere), notes=("<script>alert(1)</script> best judge ever",))


def test_the_page_the_board_writes_shows_only_what_it_recomputes(inputs, tmp_path):
    """A card's share, ceiling, intervals and rows on sets the board does not hold were shown on its board page
    as written: the board's page recomputes every row from the item scores, names the sets it could not check,
    and shows the notes escaped, as the author's text. A card whose ceiling or share is not what the set's ratings
    give is refused before it is ranked; its intervals are the board's own resamples."""
    sets, _, cards = inputs
    honest, forged = cards["good"], _forged(cards["good"])
    with pytest.raises(ValueError, match=r"field 'rows\[0\]' \(one/score\): ceiling is 0.123 on the card"):
        standings([forged, cards["weak"]], sets, bootstrap=20)  # an edited ceiling is refused before ranking
    share_only = replace(honest, rows=tuple(replace(row, share=0.95) for row in honest.rows))
    with pytest.raises(ValueError, match=r"share of the ceiling is 0.95 on the card but the set's ratings"):
        standings([share_only, cards["weak"]], sets, bootstrap=20)
    intervals_only = replace(honest, rows=tuple(replace(row, pearson_low=0.777) for row in honest.rows))
    assert standings([intervals_only, cards["weak"]], sets, bootstrap=20)[0].judge == "good"  # recomputed
    page = write_board_card(forged, sets, tmp_path / "cards" / "00", bootstrap=50, seed=0).read_text()
    for made_up in ("4.321", "0.123", "0.777", "0.654", "made up", "-0.555", "0.999", "9.876", "<script>"):
        assert made_up not in page, made_up
    shown, unchecked = board_card(forged, sets, bootstrap=50, seed=0)
    assert unchecked == ("elsewhere",) and [r.set for r in shown.rows] == ["one", "two"]
    for row, true in zip(shown.rows, honest.rows):
        assert row.pearson == pytest.approx(true.pearson) and row.share == pytest.approx(true.share)
        assert row.ceiling == pytest.approx(noise_ceiling(sets[row.set].ratings, "score").ceiling)
        assert row.pearson_low < row.pearson < row.pearson_high  # the board's own resamples
        assert f"<td>{row.share:.3f}</td>" in page and f"<td>{row.ceiling:.3f}</td>" in page
    assert "Recomputed by the leaderboard" in page and "<li>elsewhere</li>" in page
    assert "Notes (written by the card&#x27;s author, not checked)" in page or \
        "Notes (written by the card's author, not checked)" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; best judge ever" in page


def test_a_cards_own_page_says_its_figures_are_the_cards(inputs):
    """The page of a card as recorded (``judge card``'s) says its figures are the card's own and labels its notes
    as the card's text."""
    _, _, cards = inputs
    page = card_html(_forged(cards["good"]))
    assert "Every figure on this page is as the card records it" in page
    assert "Notes (the card's own text, as written)" in page and "<script>" not in page


# --------------------------------------------------------------------------- above the human ceiling

def test_the_ceiling_recomputed_on_every_item_once_is_the_sets_ceiling(inputs):
    sets, _, _ = inputs
    human = sets["one"]
    ids = human.items["item_id"].astype(str)
    value = _resampled_ceilings(*_rating_stats(human, "score", ids), [np.arange(len(ids))])[0]
    assert value == pytest.approx(noise_ceiling(human.ratings, "score").ceiling)


def test_scores_that_are_the_labels_plus_noise_are_flagged_above_the_ceiling(inputs, tmp_path, monkeypatch, capsys):
    """Human means plus noise (r about 0.96: under the near-copy flag's 0.99) ranked first with a mean share of
    1.05 and no flag: a share above the ceiling by its interval, the ceiling resampled too, is flagged and the
    judge is listed after the ranked ones; a judge that knows the true score is not flagged."""
    sets, judges, cards = inputs
    rng = np.random.default_rng(3)
    noisy = {n: s.items["score"].to_numpy() + rng.normal(scale=0.3, size=len(s.items)) for n, s in sets.items()}
    truth = {n: s.items["truth"].to_numpy() for n, s in sets.items()}
    labelled = judge_card(column_judge("labels plus noise", noisy), list(sets.values()), half="all", bootstrap=0)
    oracle = judge_card(column_judge("oracle", truth), list(sets.values()), half="all", bootstrap=0)
    assert all(row.pearson < 0.99 for row in labelled.rows)
    board = standings([cards["weak"], labelled, oracle, cards["good"]], sets, bootstrap=200)
    by_name = {s.judge: s for s in board}
    flagged = by_name["labels plus noise"]
    assert flagged.rank == 0 and flagged.mean_share > 1 and flagged.flags[0].startswith(ABOVE_CEILING)
    assert [s.judge for s in board][-1] == "labels plus noise" and not by_name["oracle"].flags
    assert by_name["oracle"].rank == 1 and {by_name["good"].rank, by_name["weak"].rank} == {2, 3}
    assert "labels plus noise" not in "".join(t for s in board for t in s.tied_with)
    row = leaderboard_markdown(board).splitlines()[-1]
    assert row.startswith("| – | labels plus noise |") and "above the human ceiling" in row
    assert "Not ranked, flagged: labels plus noise (above the human ceiling" in board_sentence(board)
    for number, card in enumerate((cards["weak"], labelled, oracle)):
        write_card(card, tmp_path / "cards" / f"{number}")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    assert "note: labels plus noise is not ranked: above the human ceiling" in capsys.readouterr().err
    record = {r["judge"]: r for r in board_json(tmp_path / "board")}
    assert record["labels plus noise"]["rank"] == 0 and ABOVE_CEILING in record["labels plus noise"]["flags"]


def test_a_copy_on_one_set_is_flagged_on_that_row_and_on_a_board_of_other_labels(inputs):
    """Labels plus noise on one set and an honest judge's scores on the other: the row above the ceiling is
    named, and the judge stays flagged on a board ranked on other labels' rows (a reference-free board)."""
    sets, judges, _ = inputs
    rng = np.random.default_rng(4)
    mixed = {"one": sets["one"].items["score"].to_numpy() + rng.normal(scale=0.2, size=120),
             "two": judges["good"]["two"]}
    card = judge_card(column_judge("half copied", mixed), list(sets.values()), half="all", bootstrap=0)
    standing = standings([card], sets, bootstrap=200)[0]
    assert standing.rank == 0 and any(f.startswith(ABOVE_CEILING) and "one/score" in f for f in standing.flags)
    assert standings([card], sets, bootstrap=200, labels=["nothing"])[0].flags


def test_the_answer_key_is_still_refused_a_rank(inputs):
    sets, _, cards = inputs
    key = {n: s.items["score"].to_numpy() for n, s in sets.items()}
    board = standings([cards["good"], judge_card(column_judge("key", key), list(sets.values()), half="all",
                                                     bootstrap=0)], sets, bootstrap=50)
    assert board[-1].judge == "key" and board[-1].rank == 0 and "answer key" in board[-1].flags[0]


def test_an_edited_renamed_copy_that_sorts_first_cannot_take_the_card_it_copies_off_the_board(inputs, tmp_path,
                                                                                            monkeypatch, capsys):
    """good's card renamed and one row's Pearson r edited, in a folder that sorts first: it was counted as the card
    good's is a copy of, then refused for the edited row, and good's card went with it ("no card to rank"). Each
    card is checked on its own first: the edited copy is refused, good's card is ranked."""
    sets, judges, _ = inputs
    honest = _write(_per_set("good", judges["good"], sets, "one"), tmp_path / "cards" / "zz-good")
    _write(_per_set("good", judges["good"], sets, "one"), tmp_path / "cards" / "0mallory",
           lambda record: (record.update(judge="mallory"), record["rows"][0].update(pearson=0.99)))
    _write(_per_set("weak", judges["weak"], sets, "one"), tmp_path / "cards" / "weak")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    err = capsys.readouterr().err
    lines = {r["judge"]: r for r in board_json(tmp_path / "board")}
    assert set(lines) == {"good", "weak"} and lines["good"]["card"] == str(honest), lines
    assert "refused, left out of the board:" in err and "0mallory/card.json" in err and "Pearson r is 0.99" in err


def test_a_renamed_scaled_copy_with_a_row_on_a_set_the_board_does_not_rank_is_counted_once(inputs, tmp_path,
                                                                                         monkeypatch, capsys):
    """good's scores on set one, renamed, scaled (2x + 1), with a row on a set the board does not hold: the copy
    rule asked for the same sets on both cards, so one extra row made it a second line with good's share. On the
    sets the board ranks it is good's result: counted once."""
    sets, judges, _ = inputs
    _write(_per_set("good", judges["good"], sets, "one"), tmp_path / "cards" / "good")
    elsewhere = people_set("elsewhere", seed=7)
    scaled = {"one": 2 * np.asarray(judges["good"]["one"]) + 1, "elsewhere": elsewhere.items["truth"].to_numpy()}
    copy = judge_card(column_judge("mallory", scaled), [sets["one"], elsewhere], half="all", bootstrap=0)
    _write(copy, tmp_path / "cards" / "mallory")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    err = capsys.readouterr().err
    lines = board_json(tmp_path / "board")
    assert len(lines) == 1 and lines[0]["judge"].startswith("good"), lines
    assert "mallory/card.json holds the same card as" in err


def test_a_card_made_without_ratings_or_on_an_unrated_label_is_ranked_not_refused(inputs):
    """A card made where the set kept no ratings has no ceiling (NaN) and no share: the board ranks it on its own
    figures. A row whose label the ratings do not hold is not checked against them (it raised a KeyError that
    stopped the whole board)."""
    from evalkit.judgecard.verify import _ceiling_and_share

    sets, _, cards = inputs
    honest = cards["good"]
    unrated = replace(honest, rows=tuple(replace(row, ceiling=float("nan"), share=float("nan")) for row in honest.rows))
    assert standings([unrated, cards["weak"]], sets, bootstrap=20)[0].judge == "good"
    row = honest.rows[0]
    assert _ceiling_and_share(honest, sets[row.set], replace(row, label="not rated")) == ()
