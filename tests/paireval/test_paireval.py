"""PairEval first increment: DailyDialog reading, training pairs, position-swapped scoring."""
from __future__ import annotations

import zipfile

import numpy as np
import pytest

from evalkit.models import LabelResult
from evalkit.paireval import LMJudge, paireval_scores
from evalkit.paireval.data import read_dailydialog, training_pairs


class PositionBiased:
    """Prefers slot A with probability ``bias`` whatever the replies say — a pure position bias."""

    name = "biased:test"

    def __init__(self, bias: float = 0.9):
        self.bias, self.prompts = bias, []

    def label_probs(self, prompts, labels):
        self.prompts.extend(prompts)
        return [LabelResult({"A": self.bias, "B": 1 - self.bias}, "A", "logprobs", 1.0) for _ in prompts]


class KnowsQuality:
    """Knows quality (good > meh > bad) and answers P(A) = sigmoid(quality A - quality B)."""

    name = "oracle:test"
    QUALITY = {"good": 2.0, "meh": 1.0, "bad": 0.0}

    def _quality(self, reply: str) -> float:
        return next(value for word, value in self.QUALITY.items() if word in reply)

    def label_probs(self, prompts, labels):
        results = []
        for messages in prompts:
            text = messages[-1]["content"]
            reply_a = text.split("Reply A:")[1].split("\n")[0]
            reply_b = text.split("Reply B:")[1].split("\n")[0]
            p_a = 1 / (1 + np.exp(self._quality(reply_b) - self._quality(reply_a)))
            results.append(LabelResult({"A": p_a, "B": 1 - p_a}, "A", "logprobs", 1.0))
        return results


def test_position_swap_cancels_position_bias():
    contexts, responses = [["Hi there"], ["How are you?"]], ["a good reply", "a bad reply"]
    comparisons = [(["Hello"], "other reply"), (["Morning"], "another reply")]
    backend = PositionBiased(0.9)
    both = paireval_scores(contexts, responses, comparisons, LMJudge(backend))
    assert both == pytest.approx([0.5, 0.5])  # 0.9 as A, 0.1 as B, averaged
    assert len(backend.prompts) == 2 * 2 * 2  # targets x comparisons x orders
    assert paireval_scores(contexts, responses, comparisons, LMJudge(PositionBiased(0.9)), positions="first") == \
        pytest.approx([0.9, 0.9])
    assert paireval_scores(contexts, responses, comparisons, LMJudge(PositionBiased(0.9)), positions="second") == \
        pytest.approx([0.1, 0.1])


def test_a_judge_that_knows_quality_ranks_replies():
    scores = paireval_scores([["Hi"], ["Hi"]], ["a good reply", "a bad reply"], [(["Yo"], "meh")], LMJudge(KnowsQuality()))
    assert scores[0] > 0.5 > scores[1]


def test_training_pairs_balance_slots_and_draw_negatives_elsewhere():
    dialogues = [[f"d{d} t{t}" for t in range(5)] for d in range(20)]
    pairs = training_pairs(dialogues, 400, seed=3)
    assert 0.4 < (pairs["better"] == "A").mean() < 0.6
    assert set(pairs["negative"]) == {"random"}
    for row in pairs.itertuples():
        good = (row.context_a, row.response_a) if row.better == "A" else (row.context_b, row.response_b)
        bad = (row.context_b, row.response_b) if row.better == "A" else (row.context_a, row.response_a)
        source, turn = (int(part[1:]) for part in good[1].split())
        assert good[0] == [f"d{source} t{t}" for t in range(turn)]  # the real next utterance of its context
        bad_context_source = int(bad[0][0].split()[0][1:])
        assert bad_context_source != source
        assert not bad[1].startswith((f"d{source} ", f"d{bad_context_source} "))  # a reply from a third dialogue
    assert training_pairs(dialogues, 50, seed=3).equals(training_pairs(dialogues, 50, seed=3))


def test_hard_negatives_come_from_dailydialog_plusplus_records():
    dialogues = [[f"d{d} t{t}" for t in range(5)] for d in range(20)]
    records = [{"context": ["ctx q"], "positive_responses": ["fine"], "adversarial_negative_responses": ["sly"]}]
    pairs = training_pairs(dialogues, 300, seed=1, hard_negatives=records, hard_share=0.5)
    hard = pairs[pairs["negative"] == "adversarial"]
    assert 0.4 < len(hard) / len(pairs) < 0.6
    for row in hard.itertuples():
        assert (["ctx q"], "sly") in [(row.context_a, row.response_a), (row.context_b, row.response_b)]


def test_copy_negatives_repeat_their_own_context_and_leave_other_pairs_alone():
    dialogues = [[f"d{d} t{t}" for t in range(5)] for d in range(20)]
    assert training_pairs(dialogues, 60, seed=3, copy_share=0.0).equals(training_pairs(dialogues, 60, seed=3))
    pairs = training_pairs(dialogues, 400, seed=3, copy_share=0.25)
    copies = pairs[pairs["negative"] == "copy"]
    assert 0.18 < len(copies) / len(pairs) < 0.32
    forms = set()
    for row in copies.itertuples():
        context, reply = (row.context_b, row.response_b) if row.better == "A" else (row.context_a, row.response_a)
        source, turn = (int(part[1:]) for part in context[-1].split())
        if reply == context[-1]:
            forms.add("parrot")
        else:  # the previous turn, then the real next utterance of the same dialogue
            assert reply == f"{context[-1]} d{source} t{turn + 1}"
            forms.add("prefix")
    assert forms == {"parrot", "prefix"}


def test_compare_responses_and_directeval_read_the_right_labels():
    from evalkit.paireval import compare_responses, directeval_scores
    from tests.fakes import ScriptedBackend

    assert compare_responses([["Hi"]], ["x"], ["y"], LMJudge(PositionBiased(0.8))) == pytest.approx([0.5])
    assert compare_responses([["Hi"]], ["a good one"], ["a bad one"], LMJudge(KnowsQuality()))[0] > 0.8
    backend = ScriptedBackend(lambda prompt: "Yes" if "kind" in prompt else "No")
    assert directeval_scores([["Hi"], ["Hi"]], ["a kind reply", "rude"], LMJudge(backend)).tolist() == [0.9, 0.1]


def test_prompt_limits_clip_contexts_and_replies():
    from evalkit.paireval.prompts import PromptLimits, pair_messages

    text = pair_messages(["t1", "t2", "t3 is long here"], "w " * 100, ["u"], "r",
                         limits=PromptLimits(turns=2, words=3))[0]["content"]
    assert "t1" not in text and "t3 is long …" in text and "w w w …" in text


def test_comparison_runs_positions_and_exhaustive():
    from evalkit.paireval.analysis import comparison_runs, exhaustive_matrix, ranking_accuracy

    matrix = paireval_matrix = np.array([[[0.9, 0.1], [0.6, 0.4]]])
    assert comparison_runs(matrix, 2, 1)[0] == pytest.approx([0.5])
    assert comparison_runs(paireval_matrix, 1, 2, positions="first")[1] == pytest.approx([0.6])
    assert comparison_runs(matrix, 1, 2, positions="second")[0] == pytest.approx([0.1])
    with pytest.raises(ValueError):
        comparison_runs(matrix, 3, 1)
    full = exhaustive_matrix([["a"], ["b"], ["c"]], ["a good", "a meh", "a bad"], LMJudge(KnowsQuality()))
    assert np.isnan(full[np.arange(3), np.arange(3)]).all()
    scores = np.nanmean(full, axis=(1, 2))
    assert scores[0] > scores[1] > scores[2]
    assert ranking_accuracy(scores[:2], scores[1:]) == 1.0


def test_lora_training_lowers_the_loss_and_the_adapter_reloads(tmp_path, monkeypatch):
    from evalkit.models import TransformersBackend
    from evalkit.paireval.training import train_lora

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    words = ["apple", "river", "stone", "cloud", "lamp", "tiger", "piano", "maple"]
    prompts = [[{"role": "user", "content": f"Word: {w}. Answer A or B."}] for w in words]
    targets = ["B" if i % 2 else "A" for i in range(len(words))]
    run = train_lora(prompts, targets, steps=12, batch_size=4, learning_rate=2e-3, seed=5,
                     output_dir=tmp_path / "adapter")
    assert np.mean(run.losses[-3:]) < np.mean(run.losses[:3])
    assert (tmp_path / "adapter" / "adapter_config.json").is_file() and run.seconds_per_step > 0
    again = train_lora(prompts, targets, steps=12, batch_size=4, learning_rate=2e-3, seed=5,
                       output_dir=tmp_path / "adapter")
    assert again.from_cache and again.losses == run.losses  # the saved run is reused, not retrained
    tuned = TransformersBackend(adapter=tmp_path / "adapter").label_probs(prompts, ["A", "B"])
    base = TransformersBackend().label_probs(prompts, ["A", "B"])
    gain = [t.probs[y] - b.probs[y] for t, b, y in zip(tuned, base, targets)]
    assert np.mean(gain) > 0.05  # the reloaded adapter moved the answers toward the targets
    rerun = train_lora(prompts, targets, steps=12, batch_size=4, learning_rate=2e-3, seed=5,
                       output_dir=tmp_path / "other", reuse=False)
    assert rerun.losses == pytest.approx(run.losses, rel=1e-4)  # seeded: the same run twice


def test_meta_eval_schema_round_trip_and_errors(tmp_path):
    import pandas as pd

    from evalkit.paireval import MetaEvalFormatError, meta_evaluate, read_meta_eval, write_meta_eval

    frame = pd.DataFrame({"context": [["Hi", "Hello, how can I help?"], ["Bye"], ["Yo"]],
                          "response": ["I need a plumber.", "See you", "Sup"], "reference": ["x", None, "z"],
                          "score": [5.0, 1.0, 3.0], "dataset": "toy", "system": ["a", "b", "a"]})
    for suffix in (".jsonl", ".csv"):
        back = read_meta_eval(write_meta_eval(frame, tmp_path / f"set{suffix}"))
        assert back["context"].tolist() == frame["context"].tolist()
        assert back["score"].tolist() == [5.0, 1.0, 3.0]
        assert back["reference"][0] == "x" and pd.isna(back["reference"][1])  # an absent reference stays absent
    # Each malformed file names itself, its line and (where there is one) the field. CSV cases cover a ragged
    # row (pandas would pad it with blanks), bytes that are not UTF-8, and a quoted field spanning two lines
    # (line numbers are the file's).
    jsonl_row = '{"context": ["Hi"], "response": %s, "score": %s}\n'
    csv_head = 'context,response,score\n"[""Hi""]",x,2\n'
    cases = [
        ("bad.jsonl", jsonl_row % ('"x"', 2) + '{"context": "Hi", "response": "y", "score": 1}\n',
         r"bad.jsonl, line 2, field 'context'"),
        ("bad.jsonl", jsonl_row % ('"x"', '"high"'), r"line 1, field 'score'"),
        ("bad.jsonl", jsonl_row % ('"x"', "true"), r"line 1, field 'score': True is not a number"),
        ("bad.jsonl", jsonl_row % ('"x"', 2) + "not json\n", r"line 2: not JSON"),
        ("bad.csv", csv_head + '"[""Hi""]",,3\n', r"bad.csv, line 3, field 'response'"),
        ("bad.csv", csv_head + '"[""Hi""]",y,3,extra\n', r"bad.csv, line 3: 4 field\(s\) where the header has 3"),
        ("bad.csv", csv_head + '"[""Hi""]",y\n', r"bad.csv, line 3: 2 field\(s\) where the header has 3"),
        ("bad.csv", (csv_head + '"[""Hi""]",caf\xe9,3\n').encode("latin-1"),
         r"bad.csv, line 3: not UTF-8 text \(byte 0xe9"),
        ("bad.jsonl", (jsonl_row % ('"caf\xe9"', 2)).encode("latin-1"), r"bad.jsonl, line 1: not UTF-8 text"),
        ("bad.csv", 'context,response,score\n"[""Hi""]","two\nlines",2\n"[""Hi""]",,3\n',
         r"bad.csv, line 4, field 'response'"),
    ]
    for name, content, message in cases:
        path = tmp_path / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
        with pytest.raises(MetaEvalFormatError, match=message):
            read_meta_eval(path)
    frame["metric"] = [0.9, 0.1, 0.5]
    result = meta_evaluate(frame, "metric")
    assert result["pearson"] > 0.9 and result["spearman"] == pytest.approx(1.0) and result["n"] == 3


def test_cli_score_and_meta_eval_round_trip(tmp_path, monkeypatch, capsys, real_data_dir):
    import pandas as pd

    from evalkit.cli.commands import main
    from evalkit.paireval import read_meta_eval, write_meta_eval

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    frame = pd.DataFrame({"context": [["Where is the station?"], ["Do you like tea?"], ["What time is it?"],
                                      ["Can you help me?"]],
                          "response": ["Two blocks north.", "Purple elephants sing.", "It is noon.", "Sure, how?"],
                          "score": [5, 1, 5, 4]})
    source = write_meta_eval(frame, tmp_path / "set.jsonl")
    assert main(["paireval", "score", "--input", str(source), "--output", str(tmp_path / "out.csv"),
                 "--comparisons", "1", "--recipe", "smoke"]) == 0
    scored = read_meta_eval(tmp_path / "out.csv")
    assert scored["paireval"].between(0, 1).all() and len(scored) == 4
    capsys.readouterr()
    assert main(["paireval", "meta-eval", "--input", str(tmp_path / "out.csv")]) == 0
    printed = capsys.readouterr().out
    assert "pearson r = " in printed and "spearman rho = " in printed and "n = 4" in printed
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"context": ["Hi"], "response": "x"}\n')
    assert main(["paireval", "meta-eval", "--input", str(broken)]) == 2
    assert "broken.jsonl, line 1, field 'score': missing" in capsys.readouterr().err
    assert main(["paireval", "meta-eval", "--input", str(tmp_path / "out.csv"), "--metric", "score"]) == 2
    assert "human score itself" in capsys.readouterr().err
    assert main(["paireval", "meta-eval", "--input", str(tmp_path / "out.csv"), "--metric", "paireva"]) == 2
    assert "no column 'paireva'" in capsys.readouterr().err
    assert main(["paireval", "meta-eval", "--input", str(tmp_path / "out.csv"), "--metric", "response"]) == 2
    assert "out.csv, line 2, field 'response': 'Two blocks north.' is not a number" in capsys.readouterr().err


def test_khalid_lee_cases_parse_and_malformed_case_is_named(tmp_path):
    import io
    import tarfile

    from evalkit.paireval.data import read_khalid_lee

    def case(original, modified):
        return "original_conversation\n" + "\n".join(original) + "\nmodified_conversation\n" + "\n".join(modified) + "\n"

    archive = tmp_path / "attacks.tar.gz"
    with tarfile.open(archive, "w:gz") as bundle:
        for name, text in {"t/dullness/case_1": case(["Hi", "How are you?"], ["Hi", "OK."]),
                           "t/entrainment/case_2": case(["Hi", "Yo", "Bye"], ["Hey", "Yo", "Bye now"]),
                           "t/dullness/prob_cases_usr": "1 0.5 0.4\n"}.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    cases = read_khalid_lee(archive)
    assert cases[["attack", "case", "original", "modified"]].values.tolist() == [
        ["dullness", 1, "How are you?", "OK."], ["entrainment", 2, "Bye", "Bye now"]]
    assert cases["context_changed"].tolist() == [False, True] and cases["context"][1] == ["Hi", "Yo"]
    folder = tmp_path / "unpacked" / "pronoun"
    folder.mkdir(parents=True)
    (folder / "case_7").write_text("original_conversation\nHi\n")  # no modified_conversation marker
    with pytest.raises(ValueError, match="pronoun/case_7"):
        read_khalid_lee(tmp_path / "unpacked")


def test_dailydialog_plusplus_malformed_line_is_named(tmp_path):
    from evalkit.paireval.data import read_dailydialog_plusplus

    path = tmp_path / "dev.json"
    path.write_text('{"context": ["a"], "positive_responses": ["b"], "adversarial_negative_responses": ["c"]}\n'
                    '{"context": ["a"], "positive_responses": ["b"], "adversarial_negative_responses": []}\n')
    with pytest.raises(ValueError, match="line 2, field 'adversarial_negative_responses'"):
        read_dailydialog_plusplus(path)


def test_read_dailydialog_and_malformed_line(tmp_path):
    archive = tmp_path / "train.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("train/dialogues_train.txt", "Hi . __eou__ Hello ! __eou__\nHow are you ? __eou__ Fine . __eou__\n")
        bundle.writestr("train/dialogues_act_train.txt", "1 2\n")
    assert read_dailydialog(archive) == [["Hi .", "Hello !"], ["How are you ?", "Fine ."]]
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(broken, "w") as bundle:
        bundle.writestr("test/dialogues_test.txt", "Hi . __eou__ Hello ! __eou__\nonly one __eou__\n")
    with pytest.raises(ValueError, match="line 2: fewer than two utterances"):
        read_dailydialog(broken)


def test_real_dailydialog(real_data_dir):
    from evalkit.paireval.data import load_dailydialog

    dialogues = load_dailydialog("validation", data_dir=real_data_dir)  # checksums verified on the way
    assert len(dialogues) == 1000 and all(len(d) >= 2 for d in dialogues)
    assert np.mean([len(d) for d in dialogues]) > 5


def test_real_attack_suite_and_dailydialog_plusplus(real_data_dir):
    from evalkit.paireval.data import KHALID_LEE_ATTACKS, load_dailydialog_plusplus, load_khalid_lee

    cases = load_khalid_lee(data_dir=real_data_dir)  # the content manifest is verified on the way
    assert len(cases) == 7417 and set(cases["attack"]) == set(KHALID_LEE_ATTACKS)
    assert cases.groupby("attack").size()["pronoun"] == 1419
    assert len(load_dailydialog_plusplus("test", data_dir=real_data_dir)) == 1142


def test_training_corpus_falls_back_to_the_embedded_chitchat_conversations(monkeypatch):
    from evalkit.paireval import data
    from evalkit.data.sources import DataUnavailable

    def offline(*args, **kwargs):
        raise DataUnavailable("no DailyDialog here")

    monkeypatch.setattr(data, "load_dailydialog", offline)
    name, train = data.training_corpus("train")
    _, held_out = data.training_corpus("validation")
    assert name == "chitchat-dataset" and len(train) > 3000 and len(held_out) > 300
    assert all(len(d) >= 2 and all(t.strip() for t in d) for d in train[:200])
    assert not {tuple(d) for d in held_out[:200]} & {tuple(d) for d in train}  # splits do not overlap


def test_copy_prefix_share_sets_the_form_of_the_copy_negatives():
    dialogues = [[f"d{d} t{t}" for t in range(5)] for d in range(20)]

    def forms(share: float) -> set[str]:
        pairs = training_pairs(dialogues, 80, seed=4, copy_share=1.0, copy_prefix_share=share)
        bad = [(r.context_b, r.response_b) if r.better == "A" else (r.context_a, r.response_a)
               for r in pairs.itertuples()]
        return {"parrot" if reply == context[-1] else "prefix" for context, reply in bad}

    assert forms(1.0) == {"prefix"} and forms(0.0) == {"parrot"} and forms(0.5) == {"prefix", "parrot"}


def test_position_bias_resamples_whole_contexts_and_checks_their_keys():
    from evalkit.paireval.comparing import position_bias

    rng = np.random.default_rng(0)
    # Ten contexts of six targets each; a context shifts all its targets' bias alike.
    shift = np.repeat(rng.normal(0, 0.2, size=10), 6)
    matrix = np.stack([0.5 + shift[:, None] + rng.normal(0, 0.01, (60, 2)), np.full((60, 2), 0.5)], axis=-1)
    contexts = [i // 6 for i in range(60)]
    grouped = position_bias({"s": matrix}, groups={"s": contexts}, bootstrap=500, seed=1)
    items = position_bias({"s": matrix}, bootstrap=500, seed=1)
    assert grouped["value"] == pytest.approx(items["value"]) == pytest.approx(shift.mean(), abs=0.01)
    assert (grouped["n"], grouped["groups"]) == (60, 10)
    # Items of one context are not independent: their interval is the honest, wider one.
    assert grouped["high"] - grouped["low"] > 1.5 * (items["high"] - items["low"])
    with pytest.raises(ValueError, match="60 targets but 59 group keys"):
        position_bias({"s": matrix}, groups={"s": contexts[:-1]}, bootstrap=10)
    with pytest.raises(KeyError, match="no groups for set 'other'"):
        position_bias({"other": matrix}, groups={"s": contexts}, bootstrap=10)
