"""The package's shape: files short enough to read in one sitting, and the pinned dataset table it ships."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from evalkit import sources

PACKAGE = Path(__file__).resolve().parent.parent / "evalkit"
MAX_LINES = 420
#: Files allowed over MAX_LINES, each with the reason (none today; add one only with its reason and its way out).
LONG_FILES: dict[str, str] = {
    "evalkit/judgecard/card.py": "one concept, the card: its rows, its record read back and checked, and judge_card, "
                                 "which builds it (adapting included); a cut would split judge_card's one loop",
}


def test_no_package_file_is_over_the_limit():
    lengths = {str(path.relative_to(PACKAGE.parent)): len(path.read_text(encoding="utf-8").splitlines())
               for path in sorted(PACKAGE.rglob("*.py"))}
    too_long = {path: n for path, n in lengths.items() if n > MAX_LINES and path not in LONG_FILES}
    assert not too_long, f"over {MAX_LINES} lines (cut by concept, or list with a reason in LONG_FILES): {too_long}"
    stale = [path for path in LONG_FILES if lengths.get(path, 0) <= MAX_LINES]
    assert not stale, f"listed in LONG_FILES but no longer long (remove them): {stale}"


def test_the_dataset_table_loads_with_a_url_and_a_sha256_for_every_file():
    assert set(sources.DATASETS) == {
        "upheld", "dailydialog", "dailydialog_plusplus", "khalid_lee_2022", "mirrorbench", "metaeval/grade",
        "metaeval/usr", "metaeval/fed", "metaeval/dailydialog_zhao", "topical_chat", "personachat",
        "commonsense_dialogues"}
    for name, dataset in sources.DATASETS.items():
        assert dataset.name == name
        assert dataset.base_url.startswith("https://") and dataset.base_url.endswith("/"), name
        assert re.search(r"/[0-9a-f]{40}/", dataset.base_url) or dataset.tree is not None, f"{name}: no commit pinned"
        assert dataset.licence and dataset.attribution, name
        pins = list(dataset.files.values()) + ([dataset.tree.manifest_sha256] if dataset.tree else [])
        assert pins, f"{name}: no file and no tree pinned"
        assert all(re.fullmatch(r"[0-9a-f]{64}", pin) for pin in pins), name
        if dataset.tree is not None:
            assert re.fullmatch(r"[0-9a-f]{40}", dataset.tree.commit), name
    # The values came through exactly (spot checks against the release pins).
    assert sources.UPHELD.files["metadata.json"] == "c0a2b6e49a7b02d26f133f7d0b0b2b69b8bce6ae6bdc8b4e2324806c36f6ebb5"
    assert len(sources.UPHELD.files) == 31 and len(sources.METAEVAL_GRADE.files) == 24
    assert sources.KHALID_LEE.tree.manifest_sha256.startswith("6f5acec4230891bc")


def test_a_damaged_table_is_refused_by_name(monkeypatch, tmp_path):
    text = (PACKAGE / "sources.yaml").read_text(encoding="utf-8")
    (tmp_path / "sources.yaml").write_text(text.replace(sources.UPHELD.files["metadata.json"], "c0a2b6e4", 1))
    monkeypatch.setattr(sources, "resources", SimpleNamespace(files=lambda package: tmp_path))
    with pytest.raises(ValueError, match=r"sources.yaml, 'upheld': a sha256 pin that is not 64 hex digits"):
        sources._read_table()


def test_the_table_is_package_data():
    """``pip install .`` (not only an editable install) must ship sources.yaml beside sources.py."""
    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert "sources.yaml" in project["tool"]["setuptools"]["package-data"]["evalkit"]
