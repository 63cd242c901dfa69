"""Student folders whose names a reader of the grade table cannot tell apart: "alice", "Alice", "alice " and
"аlice" (its first letter Cyrillic) were graded as four students, so one student's second hand-in, or a
classmate's folder named to pass for hers, was graded silently beside hers. Each such folder gets a refused row
naming the folders it collides with; none is graded."""
from __future__ import annotations

from evalkit.course.grade import grade
from evalkit.course.intake import intake

from .test_course import submission

CYRILLIC_A = "\u0430"


def test_folders_that_differ_only_in_case_spaces_or_look_alike_letters_are_refused_naming_each_other(tmp_path):
    folder = tmp_path / "class"
    names = ["alice", "Alice", "alice ", f"{CYRILLIC_A}lice"]
    for name in names:
        submission(folder / name / "04_pairwise_judge.ipynb")
    (folder / "bob.txt").write_text("not a notebook")  # a student of its own: read as before
    copies = tmp_path / "copies"
    copies.mkdir()
    entries = intake(folder, copies)
    refused = {entry.student: entry for entry in entries if entry.refused}
    assert set(refused) == set(names), [(e.student, e.refused) for e in entries]
    assert all(entry.refused == "refused: ambiguous student" and entry.copy is None for entry in refused.values())
    for name in names:  # every row names every folder it collides with, quoted so a trailing space shows
        reason = refused[name].reason
        assert all(repr(f"{other}/") in reason for other in names if other != name), reason
        assert "look-alike" in reason and "none of them is graded" in reason
    assert "U+0430 CYRILLIC SMALL LETTER A" in refused["alice"].reason  # the impostor's letter is named
    assert [entry.student for entry in entries if not entry.refused] == ["bob"]
    assert len(list(copies.iterdir())) == 1  # bob's file only: no colliding folder was copied, so none ran
    run = grade(folder, tmp_path / "grades", timeout=30, key=tmp_path / "key", trusted=True)
    rows = sorted((row.student, row.status, row.score) for row in run.rows)
    assert rows == sorted([(name, "refused: ambiguous student", 0.0) for name in names]
                          + [("bob", "not a notebook", 0.0)])


def test_the_key_folds_width_case_spaces_and_invisible_characters_but_not_real_letters():
    from evalkit.course.intake import student_key

    assert {student_key(name) for name in ("alice", "ALICE", " alice\t", "\uff41lice", "ali\u200bce",
                                           f"{CYRILLIC_A}lice", "\u0391lice")} == {"alice"}
    assert student_key("b\u00f6b") != student_key("bob")  # an umlaut is a letter of the name, not a look-alike
    assert student_key("ann lee") == student_key("ann  lee") != student_key("annlee")
