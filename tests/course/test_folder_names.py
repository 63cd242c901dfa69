"""Student folders whose names a reader of the grade table cannot tell apart: "alice", "Alice", "alice " and
"аlice" (its first letter Cyrillic) were graded as four students silently, and then (refused together) a
classmate's look-alike folder cost an honest student her grade. Each is graded under the name it has, and every
row of each names the folders it collides with."""
from __future__ import annotations

from evalkit.course.grade import grade
from evalkit.course.intake import intake

from .test_course import answer_key, submission

CYRILLIC_A = "\u0430"


def test_folders_that_differ_only_in_case_spaces_or_look_alike_letters_are_graded_naming_each_other(tmp_path):
    folder = tmp_path / "class"
    names = ["alice", "Alice", "alice ", f"{CYRILLIC_A}lice", "ali\u200bce"]
    for name in names:
        submission(folder / name / "04_pairwise_judge.ipynb")
    (folder / "bob.txt").write_text("not a notebook")  # a student of its own: read as before
    copies = tmp_path / "copies"
    copies.mkdir()
    entries = intake(folder, copies)
    assert all(not entry.refused and entry.copy is not None for entry in entries if entry.student != "bob")
    flagged = {entry.student: entry.note for entry in entries if entry.note}
    assert set(flagged) == set(names), [(e.student, e.note) for e in entries]
    for name in names:  # every entry names every folder it collides with, quoted so a trailing space shows
        assert all(repr(f"{other}/") in flagged[name] for other in names if other != name), flagged[name]
        assert "look-alike" in flagged[name] and "check which is whose" in flagged[name]
    assert "U+0430 CYRILLIC SMALL LETTER A" in flagged["alice"]  # the impostor's letter is named
    # graded: the honest folder and its impostor each get their own rows and score (the same notebook here)
    pair = tmp_path / "pair"
    for name in ("alice", f"{CYRILLIC_A}lice"):
        submission(pair / name / "04_pairwise_judge.ipynb")
    run = grade(pair, tmp_path / "grades", timeout=240, key=answer_key(tmp_path), trusted=True)
    scores: dict[str, float] = {}
    for row in run.rows:
        scores[row.student] = scores.get(row.student, 0.0) + row.score
        assert row.status == "graded" and "collides with" in row.reason, row
    assert scores["alice"] == scores[f"{CYRILLIC_A}lice"] > 0, scores


def test_the_key_folds_width_case_spaces_and_invisible_characters_but_not_real_letters():
    from evalkit.course.intake import student_key

    assert {student_key(name) for name in ("alice", "ALICE", " alice\t", "\uff41lice", "ali\u200bce",
                                           f"{CYRILLIC_A}lice", "\u0391lice")} == {"alice"}
    assert student_key("b\u00f6b") != student_key("bob")  # an umlaut is a letter of the name, not a look-alike
    assert student_key("ann lee") == student_key("ann  lee") != student_key("annlee")
    drawn_as_nothing = ("ali\u034fce", "alice\ufe0f", "alice\U000e0100", "alice\u3164", "alice\u2800", "al\u115fice")
    assert {student_key(name) for name in drawn_as_nothing} == {"alice"}  # marks and fillers a font draws as nothing
    assert student_key("\u0251lice") == "alice" and student_key("b\u0585b") == "bob"  # Latin IPA, Armenian


def test_a_folder_or_file_swapped_for_a_link_after_it_was_listed_is_refused_not_followed(tmp_path, monkeypatch):
    """A classmate swaps ``eve/`` (and ``mallory/sub/``, and ``zed/04.ipynb``) for links to Alice's folder, the
    key's folder and Alice's notebook between the grader's listing and its reading: the listing saw folders and a
    file, but each is opened by name inside its open parent, never through a link, so nobody gets another's work."""
    import os
    import stat

    from evalkit.course import intake as intake_module

    folder = tmp_path / "class"
    (folder / "alice").mkdir(parents=True)
    (folder / "alice" / "04.ipynb").write_text("ALICE-OWN-WORK")
    key = tmp_path / "key"
    key.mkdir()
    (key / "04.ipynb").write_text("KEY-SOLUTIONS")
    (folder / "mallory").mkdir()
    (folder / "mallory" / "own.ipynb").write_text("mallory")
    (folder / "zed").mkdir()
    os.symlink(folder / "alice", folder / "eve")
    os.symlink(key, folder / "mallory" / "sub")
    os.symlink(folder / "alice" / "04.ipynb", folder / "zed" / "04.ipynb")
    listing = intake_module._listing

    def listed_before_the_swap(opened, directory):  # what the listing saw a moment before the links were put in
        swapped = {"eve": stat.S_IFDIR, "sub": stat.S_IFDIR, "04.ipynb": stat.S_IFREG}
        return [(name, path, swapped.get(name, mode) if stat.S_ISLNK(mode) else mode)
                for name, path, mode in listing(opened, directory)]

    monkeypatch.setattr(intake_module, "_listing", listed_before_the_swap)
    copies = tmp_path / "copies"
    copies.mkdir()
    entries = intake_module.intake(folder, copies)
    copied = "".join(entry.copy.read_text() for entry in entries if entry.copy is not None)
    assert "ALICE-OWN-WORK" in copied and copied.count("ALICE-OWN-WORK") == 1 and "KEY-SOLUTIONS" not in copied
    refused = {entry.submission: entry.refused for entry in entries if entry.refused}
    assert refused == {"eve": "refused: symlink", "mallory/sub": "refused: symlink",
                       "zed/04.ipynb": "refused: symlink"}, refused
