"""Training corpora from more domains: read as the staged files hold them, and leak-cut against every
human-scored set."""
from __future__ import annotations

import pytest

from evalkit.paireval import corpora
from evalkit.paireval.splits import leaked_units


@pytest.fixture(scope="module")
def corpus():
    return corpora.domain_corpus(corpora.DOMAINS)


def test_personachat_reads_dialogues_without_personas(tmp_path):
    path = tmp_path / "valid.txt"
    path.write_text("1 your persona: i like tea.\n2 hi there .\thello , how are you ?\n3 good .\tnice .\n"
                    "1 your persona: i run.\n2 hey\tyo\n3 bye\n")
    assert corpora.read_personachat(path) == [["hi there .", "hello , how are you ?", "good .", "nice ."],
                                              ["hey", "yo", "bye"]]
    path.write_text("1 your persona: x\nnot numbered\n")
    with pytest.raises(ValueError, match="line 2"):
        corpora.read_personachat(path)


def test_commonsense_dialogues_refuse_a_record_without_turns(tmp_path):
    path = tmp_path / "valid.json"
    path.write_text('{"1": {"context": "c", "speaker": "s", "turns": ["a", "b"]}, "2": {"context": "c"}}')
    with pytest.raises(ValueError, match="dialogue '2', field 'turns'"):
        corpora.read_commonsense_dialogues(path)


def test_every_corpus_is_there_and_the_cut_removes_what_the_sets_were_drawn_from(corpus):
    table = corpus.table()
    assert list(table.index) == list(corpora.DOMAINS)
    assert table.loc["personachat", "dialogues"] == 1000  # the staged file's 1,000 validation dialogues
    # PersonaChat-USR and ConvAI2-GRADE contexts come from this file; Topical-Chat's from its files
    assert table.loc["personachat", "removed"] > 150 and table.loc["topical_chat", "removed"] > 300
    assert (table["kept"] > 400).all()


def test_no_held_out_text_of_any_human_scored_set_reaches_the_domain_corpora(corpus):
    held = corpora._held_out(None)
    for name, dialogues in corpus.dialogues.items():
        for source, conversations in held.items():
            assert not leaked_units(dialogues, conversations), (name, source)


def test_domain_pairs_split_evenly_and_carry_copy_negatives(corpus):
    pairs = corpora.domain_pairs(corpus, 10, seed=1, copy_share=0.5)
    assert pairs["corpus"].value_counts().to_dict() == {"personachat": 3, "commonsense": 3, "topical_chat": 2,
                                                        "chitchat": 2}
    assert set(pairs["negative"]) <= {"random", "copy"} and (pairs["negative"] == "copy").any()
