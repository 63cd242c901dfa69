"""The judge leaderboard (evalkit.judgecard.leaderboard): shares, intervals, ranks and ties on hand-made sets; a
card read back from its JSON; one judge's per-set cards merged; the command over a folder of cards."""
from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.judgecard import Card, FunctionJudge, HumanSet, card_html, judge_card, merge_cards, write_card
from evalkit.judgecard.cli import main
from evalkit.judgecard.board_pages import board_sentence, leaderboard_html, leaderboard_markdown
from evalkit.judgecard.standing import row_ceilings
from evalkit.judgecard.leaderboard import scored_card, standings, standings_frame
from evalkit.judgecard.sets import noise_ceiling


def people_set(name: str = "rated", items: int = 120, seed: int = 0) -> HumanSet:
    """``items`` replies, two per context, each rated by three people: a true score plus rating noise."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=items)
    ratings = pd.DataFrame([{"item_id": f"{name}{i}", "rater": r, "score": truth[i] + rng.normal(scale=0.7)}
                            for i in range(items) for r in range(3)])
    frame = pd.DataFrame({"item_id": [f"{name}{i}" for i in range(items)], "group": [f"g{i // 2}" for i in range(items)],
                          "half": "test", "context": [[f"context {i // 2}"] for i in range(items)],
                          "history": [[("user", f"context {i // 2}")] for i in range(items)],
                          "response": [f"reply {i}" for i in range(items)], "reference": "ref", "dataset": name})
    frame["score"] = ratings.groupby("item_id", sort=False)["score"].mean().to_numpy()
    frame["truth"] = truth
    return HumanSet(name, frame, ("score",), ratings, "")


def column_judge(name: str, values: dict[str, np.ndarray]) -> FunctionJudge:
    """A judge whose score of an item is ``values[set][its index]`` (the item ids end in the index)."""
    def score(items):
        return np.array([values[d][int(i[len(d):])] for d, i in zip(items["dataset"], items["item_id"])])
    return FunctionJudge(name, score)


@pytest.fixture(scope="module")
def board_inputs():
    sets = {name: people_set(name, seed=k) for k, name in enumerate(("one", "two"))}
    rng = np.random.default_rng(5)
    truth = {n: s.items["truth"].to_numpy() for n, s in sets.items()}
    judges = {"oracle": truth,                                                       # knows the true score
              "oracle, jittered": {n: t + rng.normal(scale=0.05, size=len(t)) for n, t in truth.items()},
              "weak": {n: t + rng.normal(scale=2.0, size=len(t)) for n, t in truth.items()},
              "noise": {n: rng.normal(size=len(t)) for n, t in truth.items()}}
    cards = [judge_card(column_judge(name, values), list(sets.values()), half="all", bootstrap=0)
             for name, values in judges.items()]
    return sets, cards


def test_share_is_pearson_over_the_sets_ceiling_and_the_board_ranks_and_ties(board_inputs):
    sets, cards = board_inputs
    board = standings(cards, sets, bootstrap=300, seed=1)
    by_name = {s.judge: s for s in board}
    ceilings = row_ceilings(sets)
    assert ceilings["one", "score"] == pytest.approx(noise_ceiling(sets["one"].ratings, "score").ceiling)
    oracle = np.mean([np.corrcoef(sets[n].items["truth"], sets[n].items["score"])[0, 1] / ceilings[n, "score"]
                      for n in sets])
    assert by_name["oracle"].mean_share == pytest.approx(oracle)
    assert by_name["oracle"].share_low < by_name["oracle"].mean_share < by_name["oracle"].share_high
    assert 0.85 < by_name["oracle"].mean_share < 1.15  # knowing the truth reaches the ceiling, up to sampling
    assert [s.judge for s in board][:2] == ["oracle", "oracle, jittered"] or \
        [s.judge for s in board][:2] == ["oracle, jittered", "oracle"]
    assert by_name["oracle"].rank == by_name["oracle, jittered"].rank == 1          # a tie, called a tie
    assert "oracle, jittered" in by_name["oracle"].tied_with
    assert by_name["weak"].rank == 3 and by_name["noise"].rank == 4                 # separated by paired intervals
    assert by_name["noise"].share_low < 0 < by_name["noise"].share_high
    assert by_name["oracle"].ceiling_rows == 2
    text = board_sentence(board)
    assert "share the first rank" in text and "All 2 other judges (weak and noise)" in text
    reference_free = standings(cards, sets, bootstrap=100, labels=["nothing"])  # no row of that label
    assert all(s.ceiling_rows == 0 and s.mean_share != s.mean_share for s in reference_free)


def test_each_line_keeps_the_paired_differences_that_decide_its_ties_and_ranks(board_inputs):
    sets, cards = board_inputs
    board = standings(cards, sets, bootstrap=300, seed=1)
    by_name = {s.judge: s for s in board}
    for s in board:
        assert {other for other, *_ in s.differences} == set(by_name) - {s.judge}  # every pair shares both rows
        for other, gap, low, high in s.differences:
            assert gap == pytest.approx(s.mean_share - by_name[other].mean_share)  # same rows, same items here
            assert low <= gap <= high
            mirror = next(d for d in by_name[other].differences if d[0] == s.judge)
            assert mirror[1:] == pytest.approx((-gap, -high, -low))
            if other in s.tied_with:
                assert low <= 0 <= high
            elif other in s.above:
                assert high < 0
            else:
                assert low > 0
    frame = standings_frame(board).set_index("judge")
    assert frame.loc["weak", "differences"].startswith("noise: +")


def test_the_markdown_table_marks_ties_and_escapes_names(board_inputs):
    sets, cards = board_inputs
    board = standings(cards, sets, bootstrap=100)
    table = leaderboard_markdown(board, {"oracle": "#card-0"})
    assert "| 1= | [oracle](#card-0) |" in table and "| 3 | weak |" in table
    frame = standings_frame(board)
    assert list(frame["judge"])[2:] == ["weak", "noise"] and frame["tied_with"].iloc[2] == ""
    evil = Card("a|b <script>", {}, "all", 0, 0, (), (), ())
    assert "<script>" not in leaderboard_markdown(standings([evil], sets, bootstrap=10))


def test_judges_are_compared_on_the_items_both_scored(board_inputs):
    """A judge scored on a sample of contexts is compared with the others on that sample only: a copy of the
    oracle restricted to half the items ties with the oracle and keeps its share."""
    sets, cards = board_inputs
    truth = {n: s.items["truth"].to_numpy() for n, s in sets.items()}
    sampled = judge_card(column_judge("oracle, sampled", truth), list(sets.values()), half="all", bootstrap=0,
                         items_per_set=60, seed=3)
    assert all(len(entry.item_ids) in range(60, 62) for entry in sampled.scores)
    board = {s.judge: s for s in standings([cards[0], sampled, cards[3]], sets, bootstrap=200, seed=3)}
    assert board["oracle, sampled"].rank == board["oracle"].rank == 1 and board["noise"].rank == 3
    assert "oracle" in board["oracle, sampled"].tied_with
    with pytest.raises(ValueError, match="share a judge name"):
        standings([cards[0], cards[0]], sets)


def test_a_card_survives_its_json_and_per_set_cards_merge(board_inputs, tmp_path):
    sets, cards = board_inputs
    card = cards[2]
    again = Card.from_record(json.loads(card.to_json()), source="x.json")
    assert again.to_json() == card.to_json()
    parts = [judge_card(column_judge("weak", {n: np.asarray(s.scores) for n, s in
                                              ((e.set, e) for e in card.scores)}), [sets[name]], half="all",
                        bootstrap=0) for name in sets]
    merged = merge_cards(parts)
    assert [r.set for r in merged.rows] == ["one", "two"] and len(merged.scores) == 2
    assert merged.rows[1].pearson == pytest.approx(card.rows[1].pearson)
    with pytest.raises(ValueError, match="sets scored twice: one"):
        merge_cards([parts[0], parts[0]])
    with pytest.raises(ValueError, match="differ in half"):
        merge_cards([parts[0], Card("weak", parts[0].spec, "test", 0, 0, (), (), ())])
    with pytest.raises(ValueError, match="y.json: not a judge card's record .no field 'rows'."):
        Card.from_record({"judge": "x"}, source="y.json")


def test_the_leaderboard_command_reads_a_folder_of_cards(board_inputs, tmp_path, monkeypatch, capsys):
    sets, cards = board_inputs
    for number, card in enumerate(cards):
        write_card(card, tmp_path / "cards" / f"unit-{number}")
    from evalkit.judgecard import cli

    monkeypatch.setattr(cli, "SET_NAMES", tuple(sets))
    monkeypatch.setattr("evalkit.judgecard.sets.load_set", lambda name, **_: sets[name])
    assert main(["leaderboard", "--cards", str(tmp_path / "cards"), "--bootstrap", "100",
                 "--out", str(tmp_path / "board")]) == 0
    table = (tmp_path / "board" / "leaderboard.md").read_text()
    assert table.count("](cards/") == 4 and "| 3 | [weak](cards/" in table
    record = board_json(tmp_path / "board")
    assert [r["judge"] for r in record][2:] == ["weak", "noise"]
    assert "4 judges from 4 cards" in capsys.readouterr().out
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "card.json").write_text("{not json")
    assert main(["leaderboard", "--cards", str(tmp_path / "bad")]) == 2  # no card to rank
    assert "bad/card.json: not JSON" in capsys.readouterr().err
    assert main(["leaderboard", "--cards", str(tmp_path / "nowhere")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_the_judge_cards_grid_runs_judges_by_sets_and_its_cards_make_a_board(tmp_path, capsys):
    """jobs/judge_cards.yml with its judges and sets cut to two fast judges on a file of one's own: each unit
    is a card; the leaderboard command, told to merge, ranks them; the book's grid file itself loads and expands."""
    import yaml

    from evalkit import grid
    from evalkit.paireval.schema import write_meta_eval

    jobs = Path(__file__).parents[2] / "jobs" / "judge_cards.yml"
    units = grid.expand(grid.load_grid(jobs))
    assert len(units) == 11 * 9 and {u.params["set"] for u in units} >= {"fed", "upheld-main"}
    human = people_set("mine")
    frame = human.items[["context", "score"]].assign(response=[f"reply {'so ' * (i % 6)}{i}" for i in range(120)],
                                                     reference=[f"reply {i}" for i in range(120)])
    write_meta_eval(frame, tmp_path / "mine.jsonl")
    raw = yaml.safe_load(jobs.read_text())
    raw.update(grid={"judge": ["length", "bleu2"], "set": ["mine.jsonl"]}, out="out")
    raw["command"] = [part.replace("../_build/judge-cards/", "out/").replace("1000", "50") for part in raw["command"]]
    (tmp_path / "grid.yml").write_text(yaml.safe_dump(raw))
    outcome = grid.run_grid(grid.load_grid(tmp_path / "grid.yml"))
    assert not outcome.failed and len(outcome.ran) == 2, outcome.failed
    assert set(outcome.table["judge"]) == {"length", "bleu2"} and set(outcome.table["half"]) == {"test"}
    assert outcome.table["mean_pearson"].notna().all() and (outcome.table["rows"] == 1).all()
    again = grid.run_grid(grid.load_grid(tmp_path / "grid.yml"))
    assert not again.ran and len(again.skipped) == 2  # a rerun repeats no finished unit
    assert main(["leaderboard", "--cards", str(tmp_path / "out" / "cards"), "--merge",
                 "--add", str(tmp_path / "mine.jsonl"), "--out", str(tmp_path / "board")]) == 0
    assert "2 judges from 2 cards" in capsys.readouterr().out
    record = board_json(tmp_path / "board")
    assert {r["judge"] for r in record} == {"length", "bleu2"} and all(r["ceiling_rows"] == 0 for r in record)


# --------------------------------------------------------------------------- the board checks what it ranks

def _board_of(cards_folder: Path, sets, monkeypatch, out: Path, *more: str) -> int:
    from evalkit.judgecard import cli

    monkeypatch.setattr(cli, "SET_NAMES", tuple(sets))
    monkeypatch.setattr("evalkit.judgecard.sets.load_set", lambda name, **_: sets[name])
    return main(["leaderboard", "--cards", str(cards_folder), "--bootstrap", "50", "--out", str(out), *more])


def board_json(out: Path) -> list[dict]:
    """The lines of the board the command wrote to ``out`` (leaderboard.json's ``standings``)."""
    return json.loads((out / "leaderboard.json").read_text())["standings"]


def _edited(card: Card, folder: Path, edit=None) -> Path:
    """``card`` written to ``folder``, its record changed by ``edit(record)`` when given (or its text, for a str
    result)."""
    record = json.loads(card.to_json())
    changed = edit(record) if edit is not None else None
    folder.mkdir(parents=True, exist_ok=True)
    text = changed if isinstance(changed, str) else json.dumps(record)
    (folder / "card.json").write_text(text)
    return folder / "card.json"


@pytest.mark.parametrize("what, edit, said", [
    ("edited rows", lambda r: r["rows"][0].update(pearson=0.99), r"field 'rows\[0\]' \(one/score\): Pearson r is 0\.99 "
                                                                 r"on the card but its item scores give"),
    ("edited n", lambda r: r["rows"][1].update(n=7), r"field 'rows\[1\]' \(two/score\): n is 7 on the card"),
    ("edited Spearman", lambda r: r["rows"][0].update(spearman=0.97),
     r"field 'rows\[0\]' \(one/score\): Spearman rho is 0\.97 on the card but its item scores give"),
    ("edited Kendall", lambda r: r["rows"][1].update(kendall=0.91),
     r"field 'rows\[1\]' \(two/score\): Kendall tau is 0\.91 on the card but its item scores give"),
    ("a Kendall tau that is text", lambda r: r["rows"][0].update(kendall="0.91"),
     r"field 'rows\[0\]': 'kendall' is '0\.91', not a number"),
    ("a Spearman rho made undefined", lambda r: r["rows"][0].update(spearman=None),
     r"Spearman rho is nan on the card but its item scores give"),
    ("an infinite score", lambda r: json.dumps(r).replace(str(r["scores"][0]["scores"][3]), "1e309", 1),
     r"field 'scores\[0\]'\.scores\[3\] \(item 'one3'\): inf is not a finite score"),
    ("a repeated id", lambda r: r["scores"][1]["item_ids"].__setitem__(5, "two4"),
     r"field 'scores\[1\]'\.item_ids: item 'two4' is listed 2 times"),
    ("a score that is text", lambda r: r["scores"][0]["scores"].__setitem__(0, "high"),
     r"field 'scores\[0\]'\.scores\[0\]: 'high' is not a number"),
    ("a bad seed", lambda r: r.update(seed="x"), r"field 'seed' is 'x', not a whole number of 0 or more"),
    ("nested too deeply", lambda r: "[" * 100000 + "]" * 100000, "nested too deeply"),
])
def test_the_board_refuses_a_card_whose_rows_or_scores_do_not_hold(board_inputs, tmp_path, monkeypatch, capsys,
                                                                   what, edit, said):
    """Edited rows showed a Mean Pearson of 0.990 beside an honest share; a score of 1e309 was 'r undefined' yet
    tied at rank 1; a repeated id ended in a pandas traceback. Each is refused, naming the file and field, and
    left out: the board is written for the other cards (one bad card stopped the whole board, exit 2), the
    refusal listed on stderr, in leaderboard.md and in leaderboard.json's refused_cards."""
    import re

    sets, cards = board_inputs
    write_card(cards[2], tmp_path / "cards" / "honest")
    bad = _edited(cards[3], tmp_path / "cards" / "edited", edit)
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0, what
    printed = capsys.readouterr()
    assert f"evalkit: refused, left out of the board: {bad}: " in printed.err and re.search(said, printed.err), \
        printed.err
    assert "Traceback" not in printed.err and "1 judges from 1 cards (1 left out" in printed.out
    assert [r["judge"] for r in board_json(tmp_path / "board")] == ["weak"]
    (refusal,) = json.loads((tmp_path / "board" / "leaderboard.json").read_text())["refused_cards"]
    assert refusal["file"] == str(bad) and re.search(said, refusal["reason"]), refusal
    page = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "## Cards left out" in page and str(bad).replace("_", "\\_") in page
    assert len(list((tmp_path / "board" / "cards").glob("*/card.html"))) == 1
    # With that card alone there is nothing to rank: the input-error status, no board.
    assert _board_of(tmp_path / "cards" / "edited", sets, monkeypatch, tmp_path / "alone") == 2
    error = capsys.readouterr().err
    assert "no card to rank: 1 refused" in error and re.search(said, error)
    assert not (tmp_path / "alone").exists()


def test_a_card_that_holds_the_answer_key_is_flagged_and_not_ranked(board_inputs, tmp_path, monkeypatch, capsys):
    """A judge whose scores were the human means ranked first at 1.185 [1.185, 1.185] with no flag; a linear
    function of them is the same key."""
    sets, cards = board_inputs
    key = {n: 3 * s.items["score"].to_numpy() - 1 for n, s in sets.items()}
    leaked = judge_card(column_judge("answer key", key), list(sets.values()), half="all", bootstrap=0)
    board = standings([*cards, leaked], sets, bootstrap=100)
    flagged = board[-1]
    assert flagged.judge == "answer key" and flagged.rank == 0 and "linear function of the human scores" in flagged.flags[0]
    assert [s.rank for s in board[:4]] == sorted(s.rank for s in board[:4]) and min(s.rank for s in board[:4]) == 1
    assert "answer key" not in "".join(t for s in board[:4] for t in s.tied_with)
    assert "| – | answer key |" in leaderboard_markdown(board)
    assert "Not ranked, flagged: answer key (its scores on one/score" in board_sentence(board)
    for number, card in enumerate([*cards, leaked]):
        write_card(card, tmp_path / "cards" / f"{number}")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    assert "note: answer key is not ranked: its scores on one/score" in capsys.readouterr().err
    record = {r["judge"]: r for r in board_json(tmp_path / "board")}
    assert record["answer key"]["rank"] == 0 and "linear function" in record["answer key"]["flags"]


def test_board_tables_and_sentence_render_as_tables_and_never_as_html(board_inputs):
    """Chapter 6 showed both tables as plain text, the separator row turned into em dashes: its notebook renders
    Markdown output as CommonMark, which has no tables. The page shows the HTML table; the Markdown table (a
    file's) keeps a plain separator row; a judge's name is text in both and in the sentence."""
    sets, cards = board_inputs
    evil = "<img src=x onerror=alert(1)>"
    renamed = [Card(evil if card.judge == "oracle" else card.judge, card.spec, card.half, card.bootstrap, card.seed,
                    card.rows, card.slots, card.costs, card.skipped, card.notes, card.scores) for card in cards]
    board = standings(renamed, sets, bootstrap=100)
    table = leaderboard_html(board, {evil: "#card-0"})
    assert table.startswith('<table class="leaderboard"><thead><tr><th>Rank</th><th>Judge</th>')
    assert table.count("<tr>") == 5 and "—" not in table and "<img" not in table
    assert '<a href="#card-0">&lt;img src=x onerror=alert(1)&gt;</a>' in table
    markdown = leaderboard_markdown(board).splitlines()
    assert markdown[1] == "|---|---|---|---|---|---|---|---|" and all(line.count(" | ") == 7 for line in markdown[2:])
    sentence = board_sentence(board)
    assert "<img" not in sentence and "&lt;img src=x onerror=alert(1)&gt;" in sentence
    import markdown_it

    rendered = markdown_it.MarkdownIt("commonmark").render(sentence)
    assert "<img" not in rendered and "&lt;img src=x onerror=alert(1)&gt;" in rendered


def test_scores_that_copy_the_labels_nearly_are_flagged_too(board_inputs):
    """Human means plus 1e-4 noise ranked first at 1.185 with no flag, as did a monotone function of them (exp):
    agreement no judge reaches (|r| or |rho| >= 0.99 on 20 or more items) is flagged, not ranked."""
    sets, cards = board_inputs
    rng = np.random.default_rng(0)
    noisy = {n: s.items["score"].to_numpy() + 1e-4 * rng.normal(size=len(s.items)) for n, s in sets.items()}
    curved = {n: np.exp(s.items["score"].to_numpy()) for n, s in sets.items()}
    copies = [judge_card(column_judge(name, values), list(sets.values()), half="all", bootstrap=0)
              for name, values in (("noisy copy", noisy), ("curved copy", curved))]
    board = {s.judge: s for s in standings([*cards, *copies], sets, bootstrap=50)}
    for name in ("noisy copy", "curved copy"):
        assert board[name].rank == 0 and "a copy of the labels" in " ".join(board[name].flags), board[name]
    assert all(board[card.judge].rank >= 1 for card in cards)


def test_a_row_on_a_set_the_board_does_not_hold_does_not_move_its_mean_pearson(board_inputs):
    from dataclasses import replace

    sets, cards = board_inputs
    card = cards[0]
    padded = replace(card, rows=card.rows + (replace(card.rows[0], set="my-own-set", pearson=0.99),))
    before = {s.judge: s for s in standings(cards, sets, bootstrap=20)}[card.judge]
    after = {s.judge: s for s in standings([padded, *cards[1:]], sets, bootstrap=20)}[card.judge]
    assert after.mean_pearson == pytest.approx(before.mean_pearson)


def test_forged_spearman_and_kendall_are_shown_nowhere(board_inputs, tmp_path, monkeypatch, capsys):
    """A card.json whose Spearman and Kendall were raised by hand (its Pearson and scores left honest) was ranked,
    and its page on the board showed the forged values: the board recomputes both, refuses the card naming the
    row, and writes no page for it."""
    sets, cards = board_inputs
    for number, card in enumerate(cards[:2]):
        write_card(card, tmp_path / "cards" / f"{number}")
    _edited(cards[2], tmp_path / "cards" / "forged",
            lambda r: [row.update(spearman=0.987654, kendall=0.876543) for row in r["rows"]])
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "first") == 0
    error = capsys.readouterr().err
    assert "forged/card.json: field 'rows[0]' (one/score): Spearman rho is 0.987654 on the card" in error, error
    pages = [path.read_text() for path in (tmp_path / "first").rglob("card.html")]
    assert len(pages) == 2 and not any("Judge card: weak" in page or "0.988" in page for page in pages)
    # The same card as made is ranked, and its page shows the Spearman and Kendall its scores give.
    write_card(cards[2], tmp_path / "cards" / "forged")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    page = next(text for text in (path.read_text() for path in (tmp_path / "board").rglob("card.html"))
                if "<h1>Judge card: weak</h1>" in text)
    for row in cards[2].rows:
        assert f"<td>{row.spearman:.3f}</td><td>{row.kendall:.3f}</td>" in page
    assert "<td>0.988</td>" not in page and "<td>0.877</td>" not in page


# A judge's name is any text a card file holds: a line break, a pipe, markup.
HOSTILE_NAMES = ("two\nlines | and a pipe", "<script>alert(1)</script>", "- a list\n\n# a heading\r\n~~~",
                 "1. first\u2028second")


def _renamed(cards, names):
    return [Card(name, card.spec, card.half, card.bootstrap, card.seed, card.rows, card.slots, card.costs,
                 card.skipped, card.notes, card.scores) for card, name in zip(cards, names)]


def _one_row_each(lines: list[str], judges: int) -> bool:
    """A Markdown table of ``judges`` rows: a header, a separator and one line of eight cells per judge."""
    return len(lines) == 2 + judges and all(line.count(" | ") == 7 for line in [lines[0], *lines[2:]])


def test_a_name_with_a_line_break_or_a_pipe_keeps_every_row_one_row(board_inputs, tmp_path, monkeypatch):
    """A judge named "two\\nlines" split its row of the Markdown table in two, and a "|" added a cell: every
    name is shown on one line, its pipes escaped and its markup as text, in the Markdown table, the sentence, the
    HTML table, the card's page and the board's leaderboard.md."""
    import markdown_it

    sets, cards = board_inputs
    renamed = _renamed(cards, HOSTILE_NAMES)
    board = standings(renamed, sets, bootstrap=50)
    links = {name: f"cards/{number:02d}/card.html" for number, name in enumerate(HOSTILE_NAMES)}
    for table in (leaderboard_markdown(board), leaderboard_markdown(board, links)):
        assert _one_row_each(table.split("\n"), len(cards)), table
        rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(table)
        assert rendered.count("<tr>") == 1 + len(cards) and rendered.count("<td>") == 8 * len(cards), rendered
        assert "<script>" not in rendered and "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
        assert "two lines \\| and a pipe" in table
    sentence = board_sentence(board)
    assert "\n" not in sentence and "\r" not in sentence and "\u2028" not in sentence
    rendered = markdown_it.MarkdownIt("commonmark").render(sentence)
    assert rendered.count("<p>") == 1, rendered
    assert not any(tag in rendered for tag in ("<ul", "<ol", "<h1", "<pre", "<script")), rendered
    page = leaderboard_html(board, links)
    assert page.count("<tr>") == 1 + len(cards) and page.count("<td>") == 8 * len(cards)
    assert "<script>" not in page and "\n" not in page and "two lines | and a pipe</a>" in page
    for card in renamed:
        shown = html.escape("".join(" " if c in "\n\r\u2028" else c for c in card.judge))
        card_page = card_html(card)
        assert "<script>" not in card_page and f"<title>Judge card: {shown}</title>" in card_page
        assert f"<h1>Judge card: {shown}</h1>" in card_page
    # The command writes the same table to leaderboard.md.
    for number, card in enumerate(renamed):
        write_card(card, tmp_path / "cards" / f"{number}")
    assert _board_of(tmp_path / "cards", sets, monkeypatch, tmp_path / "board") == 0
    written = (tmp_path / "board" / "leaderboard.md").read_text()
    table, sentence = written.rstrip("\n").split("\n\n")
    assert _one_row_each(table.split("\n"), len(cards)) and "<script>" not in written and "\n" not in sentence


def test_scores_that_are_one_persons_ratings_are_flagged_and_honest_judges_are_not(board_inputs):
    sets, cards = board_inputs
    rated = sets["one"]
    ratings = rated.ratings.assign(score=rated.ratings["score"].round())  # whole-number ratings, as people give
    rated = HumanSet(rated.name, rated.items.assign(score=ratings.groupby("item_id", sort=False)["score"].mean()
                                                   .to_numpy()), rated.labels, ratings, "")
    ids = rated.items["item_id"].to_numpy()
    rng = np.random.default_rng(3)
    by_item = ratings.groupby("item_id")["score"]
    one_rater = ratings[ratings["rater"] == 1].set_index("item_id").loc[ids, "score"].to_numpy()
    picked = np.array([rng.choice(by_item.get_group(i).to_numpy()) for i in ids])  # one rating per item, any rater
    truth = rated.items["truth"].to_numpy()
    honest = {"honest": truth + rng.normal(scale=0.5, size=len(ids)),
              "honest, on a 1-5 scale": np.clip(np.round(truth + 3 + rng.normal(scale=0.5, size=len(ids))), 1, 5)}
    two_raters = ratings[ratings["rater"] == 2].set_index("item_id").loc[ids, "score"].to_numpy()
    first_two = ratings.groupby("item_id")["score"].apply(lambda item: item.iloc[:2].mean()).loc[ids].to_numpy()
    copies = {"one rater": one_rater, "one rater, negated": -one_rater, "a rating per item, rescaled": 2 * picked + 1,
              "the mean of two raters": (one_rater + two_raters) / 2, "two raters weighted": 0.7 * one_rater + 0.3 * two_raters,
              "the mean of each item's first two ratings": first_two}
    board = standings([scored_card(name, rated, values) for name, values in {**honest, **copies}.items()],
                      {rated.name: rated}, bootstrap=50)
    line = {s.judge: s for s in board}
    for name in copies:
        assert line[name].rank == 0 and any("a copy of people's ratings" in f for f in line[name].flags), line[name]
    for name in honest:
        assert line[name].rank >= 1 and not line[name].flags, line[name]


def test_a_row_for_a_label_the_set_does_not_have_leaves_the_mean_pearson_alone(board_inputs):
    from dataclasses import replace
    sets, cards = board_inputs
    weak = next(card for card in cards if card.judge == "weak")
    ghost = replace(weak, rows=(*weak.rows, replace(weak.rows[0], label="ghost", pearson=0.99)))
    honest, forged = (standings([c], sets, bootstrap=20)[0] for c in (weak, ghost))
    assert (forged.mean_pearson, forged.pearson_rows) == (honest.mean_pearson, honest.pearson_rows)


def test_a_card_file_that_names_a_field_twice_is_refused(board_inputs, tmp_path):
    from evalkit.judgecard.cardfiles import read_card

    _, cards = board_inputs
    folder = tmp_path / "card"
    write_card(cards[0], folder)
    text = (folder / "card.json").read_text()
    (folder / "card.json").write_text(text.rstrip().rstrip("}") + ', "judge": "other-name", "rows": []}')
    with pytest.raises(ValueError, match="card.json: not JSON.*'judge' is given twice"):
        read_card(folder / "card.json")


def test_a_card_that_repeats_a_row_or_rows_a_text_column_is_refused_naming_the_field(board_inputs, tmp_path):
    from dataclasses import replace
    from evalkit.judgecard.cardfiles import read_card
    from evalkit.judgecard.verify import checked_cards

    sets, cards = board_inputs
    weak = next(card for card in cards if card.judge == "weak")
    folder = tmp_path / "card"
    write_card(replace(weak, rows=(*weak.rows, weak.rows[0])), folder)
    with pytest.raises(ValueError, match=r"card.json, field 'rows\[2\]': a second row for one/score"):
        read_card(folder / "card.json")
    texts = replace(weak, rows=(*weak.rows, replace(weak.rows[0], label="response")))
    kept, refused = checked_cards([texts], sets)
    assert kept == [] and "field 'rows[2]' (one/response): 'response' is a column of texts" in refused[0][1], refused
