"""A hostile answers file costs only its own submission: :func:`evalkit.course.answers.load` refuses ragged tuple
keys (pandas would pad them into an index of N x L cells) and keys made to share one hash value (a dict or
pandas index of n such keys costs n**2 comparisons), decodes only the names asked for, and one submission's
answers that make the grader or the key raise (MemoryError included) give that submission's rows a reason
while every other submission is graded."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from evalkit.course import answers as answers_module
from evalkit.course.answers import Unreadable, check_all, encode, load
from evalkit.course.grade import grade

from .test_course import answer_key, by_student, submission

P = 2**61 - 1  # an int's hash is the int modulo P


def write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


def ragged_series(n: int, long: int) -> dict:
    """n one-element tuple keys and one ``long``-element key."""
    pairs = [[{"tuple": [{"int": str(i)}]}, {"int": "0"}] for i in range(n)]
    pairs.append([{"tuple": [{"int": str(j)} for j in range(long)]}, {"int": "1"}])
    return {"series": pairs}


def test_ragged_tuple_keys_are_refused_in_series_and_table_indexes(tmp_path):
    with pytest.raises(Unreadable, match="not all of one length"):
        load(write(tmp_path / "series.json", {"p": ragged_series(3, 4)}))
    row = [{"int": "1"}]
    frame = {"columns": [{"str": "x"}], "index": [{"tuple": [{"str": "a"}]}, {"tuple": [{"str": "a"}, {"str": "b"}]}],
             "rows": [row, row]}
    with pytest.raises(Unreadable, match="not all of one length"):
        load(write(tmp_path / "index.json", {"p": {"frame": frame}}))
    frame = {"columns": [{"tuple": [{"str": "a"}]}, {"tuple": [{"str": "a"}, {"str": "b"}]}],
             "index": [{"str": "r"}], "rows": [[{"int": "1"}, {"int": "2"}]]}
    with pytest.raises(Unreadable, match="not all of one length"):
        load(write(tmp_path / "columns.json", {"p": {"frame": frame}}))


def test_the_probes_ragged_answers_are_refused_quickly_and_in_little_memory(tmp_path):
    """A 1 MB file (20,000 one-element keys and one of 2,000 elements) that built a 20,000 x 2,000 index and
    then a MemoryError when the grader re-encoded it: refused in a child limited to 2 GB, within seconds (its
    2,000-element key is past the width a key may have; ragged keys within it are refused as ragged above)."""
    path = write(tmp_path / "answers.json", {"p_ab": ragged_series(20_000, 2_000)})
    assert path.stat().st_size < 2**20
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))\n"
            "from evalkit.course.answers import Unreadable, load, encode\n"
            "try:\n    value = load(sys.argv[1])\n    encode(value)\n    print('decoded')\n"
            "except Unreadable as reason:\n    print('refused:', reason)\n")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 60
    assert done.stdout.startswith("refused:") and "key holds 2000 items" in done.stdout, done.stderr[-500:]


def test_tuple_keys_of_one_length_and_repeated_labels_still_decode(tmp_path):
    series = pd.Series({("main", f"k{i}"): i for i in range(2000)})
    frame = pd.DataFrame({("a", "x"): [1, 2], ("b", "y"): [3, 4]}, index=[("r", 0), ("r", 1)])
    value = {"s": series, "f": frame, "d": {(1, 2): "x", (1, 3): "y", -1: 0, -2: 1}, "z": {i: i for i in range(5000)}}
    path = tmp_path / "answers.json"
    answers_module.dump(value, list(value), str(path))
    loaded = load(path)
    assert isinstance(loaded["s"].index, pd.MultiIndex) and loaded["s"][("main", "k1999")] == 1999
    assert loaded["f"].loc[("r", 1), ("b", "y")] == 4
    assert loaded["d"] == value["d"] and loaded["z"] == value["z"]


def colliding_pairs(n: int) -> list[tuple[int, int]]:
    """n pairs (a, b) of ints with |a|, |b| < 2**61 - 1 (each int its own hash) whose tuples share one hash:
    CPython's tuple hash is invertible in its last item, so refusing big ints alone would not stop flooding."""
    mask = 2**64 - 1
    p1, p2, p5 = 11400714785074694791, 14029467366897019727, 2870177450012600261

    def rotl(x, r):
        return ((x << r) | (x >> (64 - r))) & mask

    target = hash((0, 0)) & mask
    pre = rotl(((target - (2 ^ (p5 ^ 3527539))) * pow(p1, -1, 2**64)) & mask, 64 - 31)
    pairs, a = [], 1
    while len(pairs) < n:
        acc = (rotl((p5 + a * p2) & mask, 31) * p1) & mask
        lane = ((pre - acc) * pow(p2, -1, 2**64)) & mask
        b = lane - 2**64 if lane >= 2**63 else lane
        if -P < b < P and b != -1:
            pairs.append((a, b))
        a += 1
    return pairs


def floods() -> dict[str, dict]:
    pairs = colliding_pairs(200)
    assert len({hash(pair) for pair in pairs}) == 1 and all(abs(b) < P for _, b in pairs)
    return {
        "big ints": {"dict": [[{"int": str(i * P)}, {"int": "0"}] for i in range(1, 200)]},
        "one-tuples": {"dict": [[{"tuple": [{"int": str(i * P)}]}, {"int": "0"}] for i in range(1, 200)]},
        "steered tuples": {"dict": [[encode(pair), {"int": "0"}] for pair in pairs]},
        "series index": {"series": [[{"int": str(i * P)}, {"int": "0"}] for i in range(1, 200)]},
        "index level": {"series": [[{"tuple": [{"int": str(i * P)}, {"int": str(i)}]}, {"int": "0"}]
                                   for i in range(1, 200)]},
        "table columns": {"frame": {"columns": [{"int": str(i * P)} for i in range(1, 200)], "index": [],
                                    "rows": []}},
    }


@pytest.mark.parametrize("kind", ["big ints", "one-tuples", "steered tuples", "series index", "index level",
                                  "table columns"])
def test_keys_made_to_share_one_hash_are_refused(tmp_path, kind):
    with pytest.raises(Unreadable, match="one hash value"):
        load(write(tmp_path / "flood.json", {"x": floods()[kind]}))


def test_a_flood_of_colliding_keys_is_refused_in_linear_time(tmp_path):
    """100,000 keys that all hash to 0 (one answer's whole budget) took minutes to put in a dict."""
    flood = {"dict": [[{"int": str(i * P)}, {"int": "0"}] for i in range(1, 60_001)]}
    path = write(tmp_path / "flood.json", {"x": flood})
    started = time.monotonic()
    with pytest.raises(Unreadable):
        load(path)
    assert time.monotonic() - started < 5


def test_a_built_structure_counts_against_the_budget():
    budget = [6]
    answers_module._charge(budget, 10, 4)  # four cells built from the four values read: nothing more
    assert budget == [6]
    answers_module._charge(budget, 10, 7)  # seven cells built from four values read: three more
    assert budget == [3]
    budget = [6]
    with pytest.raises(Unreadable, match="too many values"):
        answers_module._charge(budget, 10, 20)  # 4 values read, 20 cells built: 16 more than the 6 left


def test_load_decodes_only_the_names_asked_for(tmp_path):
    path = write(tmp_path / "answers.json", {"p_ab": {"list": [{"float": "0.5"}]},
                                             "zzz": ragged_series(3, 4), "junk": {"pickle": "gASV"}})
    assert load(path, names=["p_ab", "p_ba"]) == {"p_ab": [0.5]}
    with pytest.raises(Unreadable):
        load(path)


def test_one_submission_whose_decoding_raises_does_not_stop_the_keys_checks(tmp_path, monkeypatch):
    real = answers_module.decode

    def decoding(data):
        if data == {"int": "7"}:
            raise MemoryError()
        return real(data)

    monkeypatch.setattr(answers_module, "decode", decoding)
    given = {"0": {"pairs_needed": encode(7)}, "1": {"pairs_needed": encode(560)},
             "2": {"pairs_needed": ragged_series(2, 3)}}
    (tmp_path / "in.json").write_text(json.dumps(given))
    check_all({}, "04_pairwise_judge", str(tmp_path / "in.json"), str(tmp_path / "out.json"), seconds=30)
    checked = json.loads((tmp_path / "out.json").read_text())
    assert checked["0"] == {"problem": "the key could not check these answers (MemoryError)"}
    assert checked["2"] == {"problem": "an answer's tuple keys are not all of one length"}
    assert set(checked["1"]) == {"ch4-order", "ch4-size", "ch4-rank", "ch4-budget"}


def test_the_key_is_given_only_the_chapters_answer_names_and_one_failing_submission_alone(tmp_path, monkeypatch):
    """The key's kernel is stood in for: what it is given is recorded."""
    from evalkit.course import key as keying
    from evalkit.course.sandbox import Limits

    given = {}

    def supervise(command, base, limits, isolation, env, hide, bind, active):
        given.update(json.loads((base / "answers-in.json").read_text()))
        (base / "checked.json").write_text(json.dumps({key: {"ch4-size": {"passed": True}} for key in given}))
        return "ok"

    real = keying.encode

    def encoding(value, depth=0):
        if isinstance(value, str) and value == "too big":
            raise MemoryError()
        return real(value, depth)

    monkeypatch.setattr(keying, "supervise", supervise)
    monkeypatch.setattr(keying, "encode", encoding)
    answers = {"0": {"pairs_needed": 560, "zzz": "too big"}, "1": {"pairs_needed": "too big"}}
    checked = keying.check_chapter("04_pairwise_judge", answers, answer_key(tmp_path), None, tmp_path / "private",
                                   Limits(timeout=30), [])
    assert given == {"0": {"pairs_needed": {"int": "560"}}}
    assert checked == {"0": {"ch4-size": {"passed": True}},
                       "1": {"problem": "the grader could not pass these answers to the key (MemoryError)"}}


HOSTILE_DUMP = '''import json, evalkit.course.answers as _A
def _dump(namespace, names, path, _real=_A.dump):
    _real(namespace, names, path)
    data = json.loads(open(path).read())
    pairs = [[{"tuple": [{"int": str(i)}]}, {"int": "0"}] for i in range(N)]
    pairs.append([{"tuple": [{"int": str(j)} for j in range(L)]}, {"int": "1"}])
    data[NAME] = {"series": pairs}
    open(path, "w").write(json.dumps(data))
_A.dump = _dump
'''


def test_hostile_answers_beside_an_honest_submission_leave_its_rows_graded(tmp_path, monkeypatch):
    """mallory's answers carry an extra name holding ragged tuple keys (the grader re-encoded every name for
    the key and ran out of memory, here stood in for by an encode that raises MemoryError on a long Series);
    trudy's answer p_ab itself has ragged keys; victor's answers make the grader's reading raise MemoryError.
    alice's rows are graded and the tables are written; each hostile submission's rows say why."""
    from evalkit.course import key as keying

    real_encode, real_load = keying.encode, answers_module.load

    def encoding(value, depth=0):
        if isinstance(value, pd.Series) and len(value) > 1000:
            raise MemoryError()
        return real_encode(value, depth)

    def loading(path, names=None):
        if b'"boom"' in Path(path).read_bytes():
            raise MemoryError()
        return real_load(path) if names is None else real_load(path, names=names)

    monkeypatch.setattr(keying, "encode", encoding)
    monkeypatch.setattr(answers_module, "load", loading)
    folder = tmp_path / "class"
    submission(folder / "alice" / "04_pairwise_judge.ipynb")
    hostile = {"mallory": ("zzz", 2000, 50), "trudy": ("p_ab", 5, 3), "victor": ("boom", 1, 1)}
    for student, (name, n, long) in hostile.items():
        extra = HOSTILE_DUMP.replace("NAME", repr(name)).replace("N)", f"{n})").replace("L)", f"{long})")
        submission(folder / student / "04_pairwise_judge.ipynb", setup_extra=extra)
    run = grade(folder, tmp_path / "grades", timeout=240, key=answer_key(tmp_path), trusted=True)
    table = by_student(run.rows)
    assert all(row.status == "graded" and row.score == 1 for row in table["alice"].values())
    assert all(row.status == "graded" and row.score == 1 for row in table["mallory"].values())  # zzz is not read
    assert all(row.status == "crashed" and row.score == 0 and "not all of one length" in row.reason
               for row in table["trudy"].values())
    assert all(row.status == "not graded" and row.score == 0 and "MemoryError" in row.reason
               for row in table["victor"].values())
    assert run.csv.is_file() and len(run.csv.read_text().splitlines()) == 1 + 4 * 4
