"""An ``--out`` folder is checked the same way by every command that writes one: a file, a folder under a file, a
link to nothing and a name too long are refused naming the path; a new or existing folder is accepted."""
from __future__ import annotations

import pytest

from evalkit.data.folders import out_folder


def test_an_out_folder_is_refused_naming_the_file_or_the_reason(tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("the teacher's notes")
    for bad in (a_file, a_file / "grades", a_file / "grades" / "deeper"):
        with pytest.raises(ValueError, match=f"--out {bad}: {a_file} is a file, not a folder"):
            out_folder(bad)
    nowhere = tmp_path / "link"
    nowhere.symlink_to(tmp_path / "gone")
    with pytest.raises(ValueError, match="is a link that leads to no folder"):
        out_folder(nowhere / "board", option="--board")
    with pytest.raises(ValueError, match="File name too long"):
        out_folder(tmp_path / ("x" * 300))
    assert out_folder(tmp_path) == tmp_path and out_folder(str(tmp_path / "new" / "board")) == tmp_path / "new" / \
        "board"
    assert a_file.read_text() == "the teacher's notes"
