"""The ceiling checks read every row of a line, not only its mean: a merged line whose row from another file was
derived from the labels is marked on that row, naming the set and the file; a merged line says which file each
of its sets came from; and a card with no row on a set the board holds is left out and listed, not ranked."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from evalkit.judgecard.ceiling_checks import ABOVE_CEILING, ROW_AT_CEILING
from evalkit.judgecard.board_pages import leaderboard_markdown
from evalkit.judgecard.leaderboard import standings
from tests.judgecard.test_board_lines_and_refusals import _card, _leaderboard, _write, inputs  # noqa: F401
from tests.judgecard.test_leaderboard import _board_of, board_json, people_set


def test_a_merged_row_from_another_file_derived_from_the_labels_is_cautioned_naming_set_and_file(
        inputs, tmp_path, monkeypatch, capsys):
    """A forged card with the victim's judge, spec, half, bootstrap and seed, on a set the victim lacks, holding
    the labels plus noise, merged (--merge) into the victim's line: the line's mean stays under the ceiling, so
    the mean's check said nothing. The row is checked on its own: the line carries the caution on two/score,
    naming the forged file, and the line says which file each set came from (JSON and table)."""
    sets, judges = inputs
    victim = _write(_card("probe-a", judges["victim"], sets, "one"), tmp_path / "cards" / "a")
    record = json.loads(victim.read_text())
    forged = _write(_card("forger", judges["near"], sets, "two"), tmp_path / "forged" / "zz",
                    lambda r: r.update({key: record[key] for key in ("judge", "spec", "half", "bootstrap", "seed")}))
    weak = _write(_card("weak", judges["weak"], sets), tmp_path / "cards" / "weak")
    assert _leaderboard(tmp_path, sets, monkeypatch, [victim.parent, forged.parent, weak.parent],
                        tmp_path / "board", "--merge") == 0
    err = capsys.readouterr().err
    lines = {r["judge"]: r for r in board_json(tmp_path / "board")}
    line = lines["probe-a"]
    assert line["card"] == f"{victim}, {forged}" and line["share_high"] < 1  # the mean alone is not marked
    assert line["flags"] == "" and f"{ROW_AT_CEILING} (on two/score, from {forged}: share" in line["cautions"]
    assert "on one/score" not in line["cautions"] and lines["weak"]["cautions"] == ""
    assert line["rows_from"] == f"{victim}: one; {forged}: two"
    assert f"note: probe-a is ranked, but {ROW_AT_CEILING} (on two/score, from {forged}" in err
    table = (tmp_path / "board" / "leaderboard.md").read_text().replace("\\", "")
    assert f"| 2 (from {victim}: one; {forged}: two) |" in table
    assert f"(on two/score, from {forged}: share" in table
    # A line of one file keeps its Rows cell plain.
    assert lines["weak"]["rows_from"] == f"{weak}: one, two"
    (weak_row,) = [row for row in table.splitlines() if "[weak](" in row]
    assert weak_row.split(" | ")[3] == "2"


def test_a_row_above_the_ceiling_is_flagged_naming_its_set_and_file(inputs):
    """Labels plus little noise on one set, an honest judge's scores on the other, as from two files: the flag
    names the row and the file it came from."""
    sets, judges = inputs
    rng = np.random.default_rng(4)
    mixed = {"one": sets["one"].items["score"].to_numpy() + rng.normal(scale=0.2, size=120),
             "two": judges["weak"]["two"]}
    card = _card("half copied", mixed, sets)
    files = {"one": "cards/x/card.json", "two": "cards/y/card.json"}
    (standing,) = standings([card], sets, bootstrap=100, sources={"half copied": "cards/x/card.json, cards/y/card.json"},
                            row_sources={"half copied": files})
    assert standing.rank == 0
    assert any(f.startswith(ABOVE_CEILING) and "on one/score, from cards/x/card.json:" in f for f in standing.flags)
    assert not any("two/score" in f for f in standing.flags)
    assert standing.rows_from == ("cards/x/card.json: one", "cards/y/card.json: two")
    assert "(from cards/x/card.json: one; cards/y/card.json: two)" in leaderboard_markdown([standing])


def test_a_card_with_no_row_on_a_set_the_board_holds_is_left_out_and_listed(inputs, tmp_path, monkeypatch, capsys):
    """A card scored only on a set the board does not hold was ranked as 'mean share nan over 0 rows': it is
    left out, with why, on stderr, in leaderboard.md and in refused_cards; the others are ranked."""
    sets, judges = inputs
    private = people_set("myprivate", seed=7)
    values = {"myprivate": private.items["truth"].to_numpy()}
    only = _write(_card("only-private", values, {"myprivate": private}), tmp_path / "cards" / "only")
    _write(_card("weak", judges["weak"], sets), tmp_path / "cards" / "weak")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    printed = capsys.readouterr()
    why = "no row on a set this board holds (its sets: myprivate)"
    assert f"refused, left out of the board: {only}: {why}" in printed.err
    assert "only-private" not in printed.out and "nan" not in printed.out
    assert [r["judge"] for r in board_json(tmp_path / "board")] == ["weak"]
    refused = json.loads((tmp_path / "board" / "leaderboard.json").read_text())["refused_cards"]
    assert refused == [{"file": str(only), "reason": why}]
    table = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "## Cards left out" in table and "no row on a set this board holds" in table
    assert "no row with a ceiling" not in table


def test_a_judge_that_scores_only_the_items_it_gets_right_is_not_ranked(inputs):
    """A judge weak on every item (the truth plus much noise) leaves unscored the items where its score and the
    human score disagree, keeping the 70 of 120 where they agree best: its card's r on what it scored is far
    above the honest judge's, and ranked on those items it led the board. A line with any unscored item is
    flagged, unranked: a 5% allowance, its gaps filled with the judge's median, still lifted a judge from last to
    first when it dropped its worst 5%."""
    sets, judges = inputs
    human = {n: s.items["score"].to_numpy() for n, s in sets.items()}
    weak = {n: judges["weak"][n] * 0.2 + np.random.default_rng(1).normal(size=120) for n in sets}

    cherry = {}
    for n in sets:
        z_judge = (weak[n] - weak[n].mean()) / weak[n].std()
        z_human = (human[n] - human[n].mean()) / human[n].std()
        worst = np.argsort(-np.abs(z_judge - z_human))
        values = weak[n].copy()
        values[worst[:50]] = np.nan  # 50 of 120 left out: the judge's misses
        cherry[n] = values
    honest = _card("honest", judges["victim"], sets)
    board = {s.judge: s for s in standings([_card("cherry", cherry, sets), honest,
                                            _card("weak", weak, sets)], sets, bootstrap=100)}
    assert board["cherry"].mean_pearson > board["honest"].mean_pearson + 0.3  # what its card claims
    assert board["cherry"].rank == 0
    assert any("left 50 of its 120 items on one unscored (every item must be scored)" in f
               for f in board["cherry"].flags)
    assert board["honest"].rank >= 1 and not board["honest"].flags

    # Its six worst items left out (5%): not ranked either.
    few = {n: np.where(np.isin(np.arange(120), np.argsort(-np.abs(weak[n] - human[n]))[:6]), np.nan, weak[n])
           for n in sets}
    lines = {s.judge: s for s in standings([_card("few", few, sets), _card("weak", weak, sets)], sets,
                                           bootstrap=100)}
    assert lines["few"].rank == 0 and any("left 6 of its 120 items" in f for f in lines["few"].flags)
    assert lines["weak"].rank == 1


def test_a_card_whose_item_list_was_edited_to_the_favourable_items_is_not_ranked(inputs, tmp_path):
    """The card's list of items on a set must be the set's items or the kit's seeded sample of them: a card
    edited down to chosen items (its rows recomputed to match) is flagged."""
    from evalkit.judgecard.card_records import SetScores
    sets, judges = inputs
    card = _card("edited", judges["weak"], sets)
    human = sets["one"].items["score"].to_numpy()
    agree = np.argsort(-np.abs(judges["weak"]["one"] - human))[40:]  # the 80 items it gets least wrong
    kept = [SetScores("one", tuple(sets["one"].items["item_id"].iloc[agree]),
                      tuple(float(v) for v in judges["weak"]["one"][agree])),
            *[e for e in card.scores if e.set != "one"]]
    only_rows = [r for r in card.rows if r.set != "one"]  # its rows on "one" dropped: nothing left to contradict
    edited = replace(card, rows=tuple(only_rows), scores=tuple(kept))
    (line,) = standings([edited], sets, bootstrap=50)
    assert line.rank == 0
    assert any("its 80 items on one are neither the set's 120 items nor the kit's sample of them drawn with the board's seed" in f
               for f in line.flags)
    # The kit's own seeded sample of the same size is accepted.
    drawn = sets["one"].sample(80, seed=card.seed).items
    index = drawn["item_id"].str.removeprefix("one").astype(int).to_numpy()
    sampled = [SetScores("one", tuple(drawn["item_id"]), tuple(float(v) for v in judges["weak"]["one"][index])),
               *[e for e in card.scores if e.set != "one"]]
    fair = replace(card, rows=tuple(only_rows), scores=tuple(sampled))
    (line,) = standings([fair], sets, bootstrap=50)
    assert not any("sample of them" in f for f in line.flags)


def test_a_card_on_its_best_set_only_is_shown_but_not_ranked(inputs):
    """A judge close to people on set two and poor on set one sent a card for set two alone and ranked first,
    ahead of an honest judge scored on both. A line without rows on every set the board ranks on (a set it
    cannot read excepted) keeps its share but is not ranked."""
    sets, judges = inputs
    picked = _card("picked", {"one": judges["near"]["one"], "two": judges["near"]["two"]}, sets, "two")
    honest = _card("honest", judges["weak"], sets)
    board = {s.judge: s for s in standings([picked, honest], sets, bootstrap=100)}
    assert board["picked"].rank == 0 and board["picked"].mean_share == board["picked"].mean_share
    assert board["picked"].flags[-1].startswith("scored only some of the board's sets: 1 of 2 (not one)")
    assert board["honest"].rank == 1


def test_a_sample_drawn_with_a_seed_the_board_did_not_choose_is_not_ranked(inputs):
    """`judge card --items-per-set 40 --seed S` with S chosen as the best of many seeds lifted a judge's r from
    0.32 to 0.52. A sampled card's items must be the sample drawn with the board's seed."""
    from evalkit.judgecard.card import judge_card
    from tests.judgecard.test_leaderboard import column_judge
    sets, judges = inputs
    sampled = judge_card(column_judge("sampled", judges["weak"]), list(sets.values()), half="all", bootstrap=0,
                         items_per_set=40, seed=7)
    (line,) = standings([sampled], sets, bootstrap=50, seed=0)
    assert line.rank == 0 and any("drawn with the board's seed (0)" in f for f in line.flags)
    (line,) = standings([sampled], sets, bootstrap=50, seed=7)
    assert line.rank == 1 and not line.flags


def test_a_judge_with_no_defined_share_has_no_rank_and_ties_with_no_one(inputs, tmp_path, monkeypatch):
    """Constant scores give no correlation: the board's JSON gave that line rank 1, tied with an honest judge,
    while its table showed it unranked. The line has rank 0 (not ranked) and the honest judge no tie with it."""
    sets, judges = inputs
    constant = {name: np.full(len(values), 3.0) for name, values in judges["weak"].items()}
    for name, values in (("const", constant), ("weak", judges["weak"])):
        _write(_card(name, values, sets), tmp_path / "cards" / name)
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    lines = {r["judge"]: r for r in board_json(tmp_path / "board")}
    assert lines["const"]["rank"] == 0 and lines["const"]["mean_share"] is None
    assert lines["weak"]["rank"] == 1 and lines["weak"]["tied_with"] == ""


@pytest.mark.parametrize("scale", [1e306, 1e-320])
def test_scores_of_a_size_the_arithmetic_cannot_keep_are_refused_naming_file_and_field(inputs, tmp_path, monkeypatch,
                                                                                       capsys, scale):
    """Scores near 1e306 overflowed the share (ranked at 0.0 beside a right Pearson r), and subnormal ones made it
    infinite (an honest judge flagged as a copy of the labels): such a card is refused, naming its file and
    field, and the others are ranked."""
    sets, judges = inputs
    scaled = _write(_card("scaled", {name: values * scale for name, values in judges["weak"].items()}, sets),
                    tmp_path / "cards" / "scaled")
    _write(_card("weak", judges["weak"], sets), tmp_path / "cards" / "weak")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    err = capsys.readouterr().err
    assert f"refused, left out of the board: {scaled}" in err and "field 'scores[0]'.scores: the largest" in err
    assert "RuntimeWarning" not in err and [r["judge"] for r in board_json(tmp_path / "board")] == ["weak"]


def test_a_negative_bootstrap_or_an_out_folder_that_is_a_file_is_refused_naming_the_option(inputs, tmp_path,
                                                                                           monkeypatch, capsys):
    sets, judges = inputs
    _write(_card("weak", judges["weak"], sets), tmp_path / "cards" / "weak")
    from evalkit.judgecard.cli import main

    assert main(["leaderboard", "--cards", str(tmp_path / "cards"), "--bootstrap", "-1"]) == 2
    assert "--bootstrap must be 0 or more, not -1" in capsys.readouterr().err
    a_file = tmp_path / "a-file"
    a_file.write_text("keep")
    for out in (a_file, a_file / "board"):  # a NotADirectoryError traceback, exit 1
        assert main(["leaderboard", "--cards", str(tmp_path / "cards"), "--out", str(out)]) == 2
        assert f"--out {out}: {a_file} is a file, not a folder" in capsys.readouterr().err
        assert main(["card", "--judge", "length", "--out", str(out)]) == 2
        assert f"--out {out}: {a_file} is a file, not a folder" in capsys.readouterr().err
    assert a_file.read_text() == "keep"
    monkeypatch.setenv("MY_API_TOKEN", "sk-proj-Zq8Wx3Lm5Nv7Kp2Rt9")  # a name too long, holding a key
    too_long = tmp_path / ("sk-proj-Zq8Wx3Lm5Nv7Kp2Rt9" + "x" * 300)
    assert main(["leaderboard", "--cards", str(tmp_path / "cards"), "--out", str(too_long)]) == 2
    said = capsys.readouterr().err
    assert "File name too long" in said and "Zq8Wx3" not in said and "Traceback" not in said, said


def test_a_card_holding_the_human_scores_on_part_of_its_items_is_flagged_naming_the_row(inputs):
    """Half of a weak judge's scores replaced by their items' human scores: its share stays under the ceiling, so
    the ceiling's check said nothing and it ranked above the honest weak judge. Exact matches with the labels, far
    more than chance gives, flag the row; a fifth as many mark it with a caution; the honest judges are neither."""
    from evalkit.judgecard.ceiling_checks import LABEL_MATCHES

    sets, judges = inputs

    def copied(every: int) -> dict:
        out = {}
        for name, values in judges["weak"].items():
            values = np.array(values, dtype=float)
            values[::every] = sets[name].items["score"].to_numpy()[::every]
            out[name] = values
        return out

    cards = [_card("half copied", copied(2), sets), _card("some copied", copied(12), sets),
             _card("weak", judges["weak"], sets), _card("victim", judges["victim"], sets)]
    board = {s.judge: s for s in standings(cards, sets, bootstrap=50)}
    assert board["half copied"].rank == 0 and board["half copied"].flags[0].startswith(LABEL_MATCHES)
    assert "(on one/score: 60 of 120 scores equal their item's human score exactly" in board["half copied"].flags[0]
    assert board["some copied"].rank > 0 and any(c.startswith(LABEL_MATCHES) for c in board["some copied"].cautions)
    for honest in ("weak", "victim"):
        assert board[honest].rank > 0 and not any(LABEL_MATCHES in text for text in
                                                  (*board[honest].flags, *board[honest].cautions))


def test_a_card_copying_one_set_of_another_and_adding_its_own_is_cautioned_on_both_lines(
        inputs, tmp_path, monkeypatch, capsys):
    """A card holding the victim's item scores on set one (rescaled) and its own on set two differs from the victim
    card overall, so it was ranked as a result of its own with no mark. Both lines now carry a caution naming the
    set and the other line (the board cannot tell which copied); neither is refused, and an honest line is left
    unmarked."""
    sets, judges = inputs
    _write(_card("victim", judges["victim"], sets), tmp_path / "cards" / "victim")
    taken = {"one": 3 * judges["victim"]["one"] - 2, "two": judges["near"]["two"] + 5}
    _write(_card("copier", taken, sets), tmp_path / "cards" / "copier")
    _write(_card("weak", judges["weak"], sets), tmp_path / "cards" / "weak")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    err = capsys.readouterr().err
    lines = {line["judge"]: line for line in board_json(tmp_path / "board")}
    for judge, other in (("victim", "copier"), ("copier", "victim")):
        said = f"its item scores on one follow {other}'s almost exactly (Spearman 1.0000, Pearson 1.0000 on 120"
        assert said in lines[judge]["cautions"] and lines[judge]["rank"] > 0 and lines[judge]["flags"] == ""
        assert f"note: {judge} is ranked, but {said}" in err
        assert "on two follow" not in lines[judge]["cautions"]
    assert lines["weak"]["cautions"] == ""
    # The ranks of the victim's scores on set two, under another name, beside the copier: the board holds them apart
    # as results, and marks the near copy on its set too (a monotone function or a little noise changes little).
    ranked = {"one": judges["weak"]["one"][::-1].copy(),
              "two": judges["victim"]["two"].argsort().argsort().astype(float)}
    _write(_card("ranker", ranked, sets), tmp_path / "cards" / "ranker")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "again") == 0
    lines = {line["judge"]: line for line in board_json(tmp_path / "again")}
    assert "its item scores on two follow victim's almost exactly (Spearman 1.0000" in lines["ranker"]["cautions"]
    assert "on one follow" not in lines["ranker"]["cautions"] and lines["weak"]["cautions"] == ""


def test_a_judge_name_with_a_letter_that_passes_for_a_latin_one_is_shown_escaped(inputs, tmp_path, monkeypatch,
                                                                                 capsys):
    """"gоod" with a Cyrillic о and "good" read the same on every line and table ("good ties with good"): a name
    that mixes Latin letters with look-alike ones shows each such letter as its escape."""
    sets, judges = inputs
    _write(_card("good", judges["victim"], sets), tmp_path / "cards" / "latin")
    _write(_card("g\u043eod", judges["weak"], sets), tmp_path / "cards" / "mixed")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    printed = capsys.readouterr().out
    assert "  g\\u043eod: mean share" in printed and "  good: mean share" in printed, printed
    table = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "g\u043eod" not in table and "u043eod" in table


def test_names_that_read_alike_are_told_apart_and_a_quoted_name_stays_on_its_line(inputs, tmp_path, monkeypatch,
                                                                                  capsys):
    """A Kelvin sign, a Latin script g and a trailing space each made a second "good" or "Kiwi" on the board; a
    caution quoting a copier's name printed its line break raw, faking a note about the honest judge."""
    sets, judges = inputs
    rng = np.random.default_rng(8)
    noisy = lambda scale: {n: v + rng.normal(scale=scale, size=len(v)) for n, v in judges["weak"].items()}
    _write(_card("Kiwi", judges["victim"], sets), tmp_path / "cards" / "a")
    _write(_card("\u212aiwi", noisy(3.0), sets), tmp_path / "cards" / "b")
    _write(_card("\u0261ood", noisy(3.5), sets), tmp_path / "cards" / "c")
    _write(_card("good", noisy(4.0), sets), tmp_path / "cards" / "d")
    _write(_card("good ", noisy(4.5), sets), tmp_path / "cards" / "e")
    forger = "evil\nnote: Kiwi is not ranked: forged"
    _write(_card(forger, {n: 2 * v + 1 for n, v in judges["victim"].items()} | {"two": noisy(5.0)["two"]}, sets),
           tmp_path / "cards" / "f")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    printed = capsys.readouterr()
    shown = [line.split(": mean share")[0].strip().split("  ", 1)[1] for line in printed.out.splitlines()
             if ": mean share" in line]
    assert "\\u212aiwi" in shown and "\\u0261ood" in shown and len(set(shown)) == len(shown), shown
    assert any(name.startswith("good (") and name.endswith("cards/d)") for name in shown), shown
    assert any(name.startswith("good  (") and name.endswith("cards/e)") for name in shown), shown
    assert "\nnote: Kiwi is not ranked: forged" not in printed.err
    assert "follow evil note: Kiwi is not ranked: forged's almost exactly" in printed.err


def test_a_long_copier_name_cannot_push_the_original_name_off_its_line(inputs, tmp_path, monkeypatch):
    """A renamed copy whose name and folder are long: the line's name was cut to 200 characters in the middle,
    and "also named alice" went with the cut."""
    sets, judges = inputs
    deep = tmp_path / "cards" / ("z" * 90) / "sub42"
    _write(_card("alice", judges["victim"], sets), deep)
    _write(_card("mallory-" + "m" * 150, judges["victim"], sets), tmp_path / "cards" / "a")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    (line,) = board_json(tmp_path / "board")
    assert "(also named alice by " in line["judge"] and line["judge"].startswith("mallory-mmm"), line["judge"]


def test_digits_marks_and_letters_of_other_scripts_in_a_latin_name_are_escaped():
    """Beside Latin letters, a Devanagari zero passes for ``o``, an invisible Khmer mark makes a second "good", a
    Hebrew letter passes for ``o``; typography such as an en dash stands, but two names that differ only by it are
    told apart on the board."""
    from evalkit.judgecard._names import one_line
    from evalkit.judgecard.card import Card
    from evalkit.judgecard.cardfiles import named_apart

    for name, shown in (("g\u0966\u0966d", "g\\u0966\\u0966d"), ("good\u17b4", "good\\u17b4"),
                        ("g\u05e1od", "g\\u05e1od"), ("gpt\u20134", "gpt\u20134")):
        assert one_line(name) == shown
    lines = [(Card(name, {}, "test", 0, 0, (), (), ()), [f"cards/{n}/card.json"])
             for n, name in enumerate(("gpt-4", "gpt\u20134"))]
    assert [card.judge for card, _ in named_apart(lines)] == ["gpt-4 (cards/0)", "gpt\u20134 (cards/1)"]
