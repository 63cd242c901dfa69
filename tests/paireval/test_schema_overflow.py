"""A score that is a JSON integer too large for a float (``1`` followed by 400 zeros) is an input error like any
other number that is not finite: refused naming the file, line and field, exit status 2, no traceback. ``float``
raises ``OverflowError`` on it, which the readers did not catch, as a human score (a meta-evaluation file, a set
of one's own) or as a judge's score column (``judge card --scores``)."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from evalkit.cli.commands import main as evalkit_main
from evalkit.judgecard.cli import main as judge_main
from evalkit.paireval.schema import MetaEvalFormatError, metric_scores, read_meta_eval

HUGE = 10 ** 400  # json.loads reads "1" and 400 zeros as this int; float() of it raises OverflowError


def _lines(path, records) -> None:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def _records(score_of_second=1.0, **more):
    return [{"context": ["hi", "there"], "response": f"reply {k}", "score": float(k % 4),
             "score_judge": float((k * 7) % 5), **more} | ({"score": score_of_second} if k == 1 else {})
            for k in range(8)]


def test_a_huge_integer_as_the_human_score_is_refused_naming_file_line_and_field(tmp_path):
    path = tmp_path / "set.jsonl"
    _lines(path, _records(score_of_second=HUGE))
    with pytest.raises(MetaEvalFormatError) as error:
        read_meta_eval(path)
    text = str(error.value)
    assert text == f"{path}, line 2, field 'score': an integer of 401 digits is not a finite number"


def test_a_huge_integer_in_a_score_column_is_refused_naming_file_line_and_field(tmp_path):
    path = tmp_path / "scores.jsonl"
    records = _records()
    records[4]["score_judge"] = -HUGE
    _lines(path, records)
    frame = read_meta_eval(path)
    with pytest.raises(MetaEvalFormatError, match=r"scores\.jsonl, line 5, field 'score_judge': an integer of 401 "
                                                  r"digits is not a finite number"):
        metric_scores(frame, "score_judge")
    with pytest.raises(MetaEvalFormatError, match=r"^x\.jsonl, row 2, field 'm': an integer of 401 digits"):
        metric_scores(pd.DataFrame({"m": [0.5, HUGE]}), "m", source="x.jsonl")


def test_the_commands_refuse_a_huge_integer_score_with_exit_2_and_no_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    human = tmp_path / "me.jsonl"
    _lines(human, _records(score_of_second=HUGE))
    assert evalkit_main(["paireval", "meta-eval", "--input", str(human), "--method", "length",
                         "--output", str(tmp_path / "x.jsonl")]) == 2
    error = capsys.readouterr().err
    assert f"{human}, line 2, field 'score': an integer of 401 digits is not a finite number" in error
    assert "Traceback" not in error and len(error) < 1000
    # a judge's scores file: the same number in its score column
    scores = tmp_path / "scores.jsonl"
    records = [{"item_id": f"fed:{k}", **record} for k, record in enumerate(_records())]
    records[2]["score_judge"] = HUGE
    _lines(scores, records)
    assert judge_main(["card", "--scores", str(scores), "--set", "fed", "--bootstrap", "0",
                       "--out", str(tmp_path / "card")]) == 2
    error = capsys.readouterr().err
    assert f"{scores}, line 3, field 'score_judge': an integer of 401 digits is not a finite number" in error
    assert "Traceback" not in error and not (tmp_path / "card").exists()
    # a set of one's own (--set a file): the same number as a human label
    fine = tmp_path / "fine.jsonl"
    _lines(fine, _records())
    assert judge_main(["card", "--scores", str(fine), "--set", str(human), "--bootstrap", "0",
                       "--out", str(tmp_path / "card")]) == 2
    error = capsys.readouterr().err
    assert f"{human}, line 2, field 'score': an integer of 401 digits is not a finite number" in error
    assert "Traceback" not in error and not (tmp_path / "card").exists()
