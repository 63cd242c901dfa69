"""The UPHELD loader on tiny releases the tests write, one per fault type, and on the real release."""
from __future__ import annotations

import gzip

import pandas as pd
import pytest

from tests.conftest import HEADER, SEP, row, write_annotator
from evalkit.upheld.release import UpheldFormatError, load_upheld, read_subset


def test_clean_release_gives_long_and_item_tables(release):
    root = release({1: [row(content=4), row(model="random", content=1, style=1, reasonable=1)],
                    2: [row(content=5), row(model="random", content=1, style=1, reasonable=5)]})
    data = read_subset(root.parent / "upheld")
    assert len(data.labels) == 4 and len(data.items) == 2
    first = data.labels.iloc[0]
    assert first["history"] == [("user", "I need a new phone."), ("assistant", "Which colour do you like?"),
                                ("user", "Blue or red?")]
    assert (first["turn_id"], first["conversation_id"], first["turn"], first["item_id"]) == \
        ("87-3", "87", 3, "87-3|gpt4")
    gpt4 = data.items.set_index("item_id").loc["87-3|gpt4"]
    assert gpt4["content_mean"] == 4.5 and gpt4["content_n"] == 2 and gpt4["content_bin"] == "none"
    assert gpt4["style_bin"] == "perfect" and gpt4["n_annotators"] == 2
    assert data.items.set_index("item_id").loc["87-3|random", "reasonable_bin"] == "none"
    assert data.report.rows_read == 4 and data.report.rows_kept == 4 and not data.report.faults


def test_gzipped_and_plain_files_read_alike(tmp_path):
    rows = [row(), row(turn_id="87-5")]
    write_annotator(tmp_path / "plain", 1, rows)
    write_annotator(tmp_path / "zipped", 1, rows, gz=True)
    plain, zipped = read_subset(tmp_path / "plain"), read_subset(tmp_path / "zipped")
    pd.testing.assert_frame_equal(plain.items, zipped.items)


def test_first_file_uses_id_annotated_column(release):
    header = ["id_annotated", *HEADER[1:]]
    records = [row() | {"id_annotated": "mw-20-12"}]
    root = release({1: records}, header=header)
    data = read_subset(root)
    assert data.labels["turn_id"].tolist() == ["mw-20-12"]
    assert data.labels["conversation_id"].tolist() == ["mw-20"]


def test_label_spelling_variants_are_normalised_and_counted(release):
    root = release({1: [row(content="3: Neutral - some overlap of content", reasonable="5: A reasonable continuation")]})
    data = read_subset(root)
    assert data.labels[["content", "reasonable"]].iloc[0].tolist() == [3, 5]
    assert data.report.label_variants == {"content": 1, "reasonable": 1}


def test_blank_label_stays_missing_and_is_located(release):
    root = release({1: [row(), row(turn_id="87-5", style="")]})
    data = read_subset(root)
    assert pd.isna(data.labels.loc[1, "style"])
    assert data.report.blank_labels == {"style": 1}
    fault = data.report.faults[0]
    assert (fault.file, fault.row, fault.column, fault.kind) == ("annotator_1.csv", 2, "score_task_2_style", "blank")
    assert data.items.set_index("item_id").loc["87-5|gpt4", "style_n"] == 0


def test_label_of_another_field_is_set_missing_not_guessed(release):
    root = release({1: [row(style="1: Not a reasonable continuation")]})
    data = read_subset(root)
    assert pd.isna(data.labels.loc[0, "style"])
    assert data.report.misplaced_labels == {"style": 1}
    assert data.report.faults[0].raw == "1: Not a reasonable continuation"


@pytest.mark.parametrize("bad", ["4: Same styles", "Same styles", "7: Different styles"])
def test_unparseable_label_names_file_row_and_column(release, bad):
    root = release({1: [row(), row(), row(style=bad)]})
    with pytest.raises(UpheldFormatError) as error:
        read_subset(root)
    message = str(error.value)
    assert "annotator_1.csv" in message and "row 3" in message and "score_task_2_style" in message
    assert repr(bad) in message


def test_missing_column_names_file_and_column(release):
    header = [c for c in HEADER if c != "Option B"]
    root = release({1: [row()]}, header=header)
    with pytest.raises(UpheldFormatError, match=r"annotator_1\.csv, column 'Option B': missing column"):
        read_subset(root)


def test_non_csv_file_is_rejected_with_its_name(tmp_path):
    folder = tmp_path / "upheld"
    folder.mkdir()
    (folder / "annotator_1.csv.gz").write_bytes(b"this is not gzip at all")
    with pytest.raises(UpheldFormatError, match=r"annotator_1\.csv\.gz: not a readable CSV file"):
        read_subset(folder)
    (folder / "annotator_1.csv.gz").unlink()
    (folder / "annotator_1.csv").write_bytes(gzip.compress(b"\x00\xff binary"))
    with pytest.raises(UpheldFormatError, match=r"annotator_1\.csv"):
        read_subset(folder)


def test_duplicate_rater_files_are_detected_and_dropped_by_default(release):
    same = [row(content=5), row(turn_id="87-5", content=1)]
    root = release({1: [row(content=3), row(turn_id="87-5", content=3)], 4: same, 5: same})
    dropped = read_subset(root)
    assert dropped.report.duplicate_raters == [("annotator_4.csv", "annotator_5.csv")]
    assert dropped.report.rows_dropped == {"duplicate rater file": 2}
    assert sorted(dropped.labels["annotator"].unique()) == [1, 4]
    kept = read_subset(root, drop_duplicate_raters=False)
    assert len(kept.labels) == 6 and kept.report.duplicate_raters == dropped.report.duplicate_raters


def test_leaked_reference_is_stripped_from_history(release):
    leaked = SEP.join(["user: I need a new phone.", "assistant: Try the blue one."])
    root = release({1: [row(model="random", history=leaked), row(model="gpt4_rephrase", history="user: Hi"),
                        row(model="gpt4", history="user: I need a new phone.")]})
    data = read_subset(root)
    histories = data.labels.set_index("model")["history"]
    assert histories["random"] == [("user", "I need a new phone.")]
    assert data.report.leaked_reference_stripped == {"random": 1}
    assert data.report.leak_expected_not_found == 1


def test_malformed_history_drops_the_row_and_is_located(release):
    root = release({1: [row(), row(turn_id="87-5", history="]")]})
    data = read_subset(root)
    assert len(data.labels) == 1 and data.report.rows_read == 2
    assert data.report.rows_dropped == {"malformed history": 1}
    assert [(f.row, f.kind, f.raw) for f in data.report.faults] == [(2, "malformed history", "]")]


def test_stray_cells_in_an_extra_column_are_counted(release):
    header = [*HEADER, "Unnamed: 8"]
    root = release({1: [row(), row(turn_id="87-5") | {"Unnamed: 8": "5.0"}]}, header=header)
    data = read_subset(root)
    assert data.report.extra_columns == {"Unnamed: 8": ["annotator_1.csv"]}
    assert [(f.row, f.column, f.raw) for f in data.report.faults] == [(2, "Unnamed: 8", "5.0")]


def test_bare_numeric_ids_are_grouped_by_opening_utterance(release):
    opening = "user: Can you help me plan a trip?"
    root = release({1: [row(turn_id="45300", history=opening),
                        row(turn_id="45297", history=SEP.join([opening, "assistant: Sure.", "user: Paris."])),
                        row(turn_id="45400", history="user: Something else entirely.")]})
    conversations = read_subset(root).labels.set_index("turn_id")["conversation_id"]
    assert conversations["45300"] == conversations["45297"] == "u45297"
    assert conversations["45400"] == "u45400"


def test_repeated_rating_by_one_annotator_keeps_the_first(release):
    root = release({1: [row(content=5), row(content=1)]})
    data = read_subset(root)
    assert data.labels["content"].tolist() == [5]
    assert data.report.rows_dropped == {"same annotator rated the item twice (first kept)": 1}


def test_check_set_has_no_model_column(tmp_path):
    header = ["id", *HEADER[1:-1]]
    folder = tmp_path / "additional_resources" / "topical_chat_annotated"
    write_annotator(folder, 1, [row() | {"id": "tc_211-10"}], header=header)
    data = read_subset(tmp_path, "topical_chat")
    assert data.labels[["dataset", "model", "conversation_id"]].iloc[0].tolist() == \
        ["topical_chat", "gpt-4o", "tc_211"]


def test_real_release_counts(real_data_dir):
    main = load_upheld("main", data_dir=real_data_dir)
    assert main.report.rows_read == 12291
    assert len(main.items) == 2462
    assert main.labels["turn_id"].nunique() == 412
    assert sorted(main.labels["model"].unique()) == ["gpt3_5", "gpt4", "gpt4_rephrase", "llama3.1-70b-base",
                                                     "random", "uma-V0.5"]
    assert main.report.duplicate_raters == [("annotator_4.csv.gz", "annotator_5.csv.gz")]
    # One random/rephrase row of the release does not end with the reference; all others are stripped.
    assert main.report.leak_expected_not_found == 1
    # No stripped history still ends with its own reference.
    tails = [h[-1][1] for h in main.labels["history"] if h]
    assert not any(" ".join(t.split()) == " ".join(r.split())
                   for t, r in zip(tails, main.labels.loc[main.labels["history"].map(bool), "reference"]))
    with_copies = load_upheld("main", data_dir=real_data_dir, drop_duplicate_raters=False)
    assert len(with_copies.labels) == 12291


def test_real_check_sets_faults(real_data_dir):
    arena = load_upheld("llm_arena", data_dir=real_data_dir)
    topical = load_upheld("topical_chat", data_dir=real_data_dir)
    assert arena.report.rows_read == 610 and topical.report.rows_read == 10780
    for subset in (arena, topical):
        assert subset.report.duplicate_raters[0][:2] in (("annotator_1.csv", "annotator_2.csv"),
                                                         ("annotator_1.csv.gz", "annotator_2.csv.gz"))
    assert topical.report.misplaced_labels == {"style": 1}
    assert topical.report.rows_dropped["malformed history"] == 1
    assert sum(topical.report.blank_labels.values()) > 0
