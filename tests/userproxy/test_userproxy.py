"""Chapter 5 package: lexical metrics, mirror data, rollouts, realism judges, controls and statistics."""
from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from evalkit.userproxy import evaluate, lexical, realism
from evalkit.userproxy.data import MirrorFormatError, read_mirror_set, stratified_episodes
from evalkit.userproxy.rollout import mirror_rollouts
from evalkit.stats import correlation_with_humans, summarise
from tests.fakes import ScriptedBackend

WORDS = ("the cat sat on a mat and the dog ran to the red barn while a bird sang over the old "
         "green hill near the river where children played every summer").split()


def _text(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [WORDS[i] for i in rng.integers(0, len(WORDS), size=n)]


def test_mattr_matches_the_definition_window_by_window():
    tokens = _text(1, 140)
    naive = np.mean([len(set(tokens[i:i + 50])) / 50 for i in range(len(tokens) - 49)])
    assert lexical.mattr(tokens, 50) == pytest.approx(naive)


def test_hdd_matches_the_hypergeometric_formula():
    tokens = _text(2, 90)
    n = len(tokens)
    expected = sum(1 - math.comb(n - f, 42) / math.comb(n, 42) for f in Counter(tokens).values()) / 42
    assert lexical.hdd(tokens, 42) == pytest.approx(expected)


def test_lexical_metrics_agree_with_lexicalrichness_where_definitions_coincide():
    lr = pytest.importorskip("lexicalrichness")
    text = " ".join(_text(3, 120))
    reference = lr.LexicalRichness(text)
    tokens = lexical.word_tokenizer(text)
    assert len(tokens) == reference.words
    assert lexical.mattr(tokens, 50) == pytest.approx(reference.mattr(window_size=50))
    assert lexical.hdd(tokens, 42) == pytest.approx(reference.hdd(draws=42))
    assert lexical.yules_k(tokens) == pytest.approx(reference.yulek)


def test_repetitive_text_scores_less_diverse_on_every_metric():
    varied, repetitive = _text(4, 80), ["the", "cat"] * 40
    assert lexical.mattr(varied) > lexical.mattr(repetitive)
    assert lexical.hdd(varied) > lexical.hdd(repetitive)
    assert lexical.yules_k(varied) < lexical.yules_k(repetitive)  # Yule's K grows with repetition


def test_lexical_profile_flags_short_texts_and_z_scores_anchor_on_humans():
    profile = lexical.lexical_profile(["hi", " ".join(_text(5, 60))], lexical.word_tokenizer, min_tokens=5)
    assert profile["unstable"].tolist() == [True, False] and np.isnan(profile["mattr"][0])
    assert lexical.human_anchored_z([1.0, 1.0], [1.0, 1.0, 1.0]) != lexical.human_anchored_z([2.0], [1.0, 3.0])
    assert lexical.human_anchored_z([2.0], [1.0, 3.0]) == pytest.approx(0.0)
    assert lexical.human_anchored_z([3.0], [1.0, 3.0]) == pytest.approx(1 / np.std([1.0, 3.0], ddof=1))


def _write_jsonl(path, records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_mirror_set_normalisation_is_counted(tmp_path):
    path = _write_jsonl(tmp_path / "toy_mirror.jsonl", [
        {"dataset": "toy", "conversation_id": "q1", "task_description": "wants a map",
         "turns": [{"role": "assistant", "content": "do you want a map?"}, {"role": "user", "content": "yes"}],
         "metadata": {"topic": "library map"}},
        {"dataset": "toy", "conversation_id": "q2", "task_description": "",
         "turns": [{"role": "user", "content": "hi"}, {"role": "user", "content": "anyone?"},
                   {"role": "assistant", "content": ""}, {"role": "assistant", "content": "hello"}]},
        {"dataset": "toy", "conversation_id": "q3", "turns": [{"role": "user", "content": "hola"}],
         "metadata": {"language": "es"}},
    ])
    episodes, report = read_mirror_set(path)
    assert episodes["conversation_id"].tolist() == ["q1", "q2"]
    assert episodes["turns"][0][0] == {"role": "user", "content": "library map"}
    assert episodes["turns"][1][0]["content"] == "hi\nanyone?" and episodes["user_turns"].tolist() == [2, 1]
    assert report.counts == {"opening user query restored from metadata": 1, "same-role turns merged": 1,
                             "empty turns dropped": 1, "conversations dropped": 1}
    assert report.dropped == [(3, "language es")]


def test_malformed_mirror_line_names_file_line_and_field(tmp_path):
    good = {"conversation_id": "a", "turns": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]}
    with pytest.raises(MirrorFormatError, match=r"bad.jsonl, line 2: not JSON"):
        read_mirror_set(_write_jsonl(tmp_path / "bad.jsonl", [good, "{oops"]))
    bad_turn = {"conversation_id": "b", "turns": [{"role": "system", "content": "x"}]}
    with pytest.raises(MirrorFormatError, match=r"line 2, field 'turns\[0\]'"):
        read_mirror_set(_write_jsonl(tmp_path / "bad.jsonl", [good, bad_turn]))


def test_stratified_sampling_keeps_a_minimum_per_stratum_and_is_seeded():
    frame = pd.DataFrame({"stratum": ["big"] * 50 + ["mid"] * 10 + ["rare"] * 2, "x": range(62)})
    sample = stratified_episodes(frame, 12, minimum=3, seed=4)
    counts = sample["stratum"].value_counts().to_dict()
    assert len(sample) == 12 and counts["rare"] == 2 and counts["mid"] >= 3
    assert sample.equals(stratified_episodes(frame, 12, minimum=3, seed=4))


def test_mirror_driver_writes_as_many_user_turns_as_the_real_conversation():
    real = [[{"role": "user", "content": "a"}, {"role": "assistant", "content": "REF1"},
             {"role": "user", "content": "b"}, {"role": "assistant", "content": "REF2"}],
            [{"role": "user", "content": "c"}, {"role": "assistant", "content": "REF3"}]]
    proxy = ScriptedBackend(lambda prompt: 'USER: "my question"\nASSISTANT: an answer it should not write')
    seen = []
    assistant = ScriptedBackend(lambda prompt: seen.append(prompt) or "sure")
    multi = mirror_rollouts(real, ["goal one", "goal two"], "full", proxy, assistant)
    assert [[t["role"] for t in r] for r in multi] == [["user", "assistant"] * 2, ["user", "assistant"]]
    assert multi[0][0]["content"] == "my question"  # cut to one user message, quotes stripped
    single = mirror_rollouts(real, ["goal one", "goal two"], "full", proxy, assistant, mode="single")
    assert [len(r) for r in single] == [2, 2]


def test_empty_turns_hold_their_place_and_are_counted():
    real = [[{"role": "user", "content": "a"}, {"role": "assistant", "content": "REF1"},
             {"role": "user", "content": "b"}, {"role": "assistant", "content": "REF2"}]]
    silent = ScriptedBackend(lambda prompt: "USER: ")  # nothing left once the speaker label is cut
    empty: list = []
    rolled = mirror_rollouts(real, ["goal"], "full", silent, ScriptedBackend(lambda p: "   "), empty_turns=empty)
    assert [t["content"] for t in rolled[0]] == ["…"] * 4
    assert empty == [{"episode": 0, "turn": 0, "role": "user"}, {"episode": 0, "turn": 1, "role": "assistant"},
                     {"episode": 0, "turn": 2, "role": "user"}, {"episode": 0, "turn": 3, "role": "assistant"}]


def test_the_echo_guard_asks_again_then_gives_the_guided_assistant_the_real_reply():
    from evalkit.models import GenerationResult

    class Parrot:
        """Repeats the user's last turn; told not to, answers ``obedient`` (None: parrots anyway)."""

        def __init__(self, obedient):
            self.obedient, self.prompts = obedient, []

        def generate(self, prompts, *, max_tokens=128, temperature=0.0, n=1, seed=0):
            self.prompts += prompts
            return [GenerationResult([self.obedient if "Do not repeat" in m[0]["content"] and self.obedient
                                      else m[-1]["content"]] * n, 10, 5) for m in prompts]

    real = [[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello, how can I help?"},
             {"role": "user", "content": "tips"}, {"role": "assistant", "content": "Try the trams."}]]
    proxy = ScriptedBackend(lambda prompt: "USER: I'm Sarah, planning a trip to Lisbon")
    repairs: list = []
    rolled = mirror_rollouts(real, ["goal"], "full", proxy, Parrot("Lovely, Sarah! When do you go?"),
                             echo_repairs=repairs)
    assert [t["content"] for t in rolled[0] if t["role"] == "assistant"] == ["Lovely, Sarah! When do you go?"] * 2
    assert [r["how"] for r in repairs] == ["asked again"] * 2 and [r["turn"] for r in repairs] == [1, 3]
    repairs.clear()
    rolled = mirror_rollouts(real, ["goal"], "full", proxy, Parrot(None), echo_repairs=repairs)
    assert [t["content"] for t in rolled[0] if t["role"] == "assistant"] == ["Hello, how can I help?", "Try the trams."]
    assert [r["how"] for r in repairs] == ["real reply"] * 2
    repairs.clear()
    unguided = mirror_rollouts(real, ["goal"], "full", proxy, Parrot(None), guided=False, echo_repairs=repairs)
    assert [r["how"] for r in repairs] == ["still an echo"] * 2  # no real reply to fall back on: kept, counted
    assert evaluate.echoes(unguided[0]) == (2, 2)
    parrot = Parrot(None)
    unguarded = mirror_rollouts(real, ["goal"], "full", proxy, parrot, echo_guard=False)
    assert evaluate.echoes(unguarded[0]) == (2, 2) and len(parrot.prompts) == 2  # one ask per reply


def test_pi_order_flips_are_seeded_and_balanced():
    slots = realism.proxy_slots(400, seed=7)
    assert slots == realism.proxy_slots(400, seed=7) and slots != realism.proxy_slots(400, seed=8)
    assert slots.count("A") == 200 and all(realism.proxy_slots(n, 3).count("A") in (n // 2, n - n // 2)
                                             for n in range(1, 12))


def test_pi_scores_follow_the_judge_and_the_slot():
    real = [{"role": "user", "content": "real person here"}, {"role": "assistant", "content": "ok"}]
    proxy = [{"role": "user", "content": "simulated text"}, {"role": "assistant", "content": "ok"}]
    pairs = [(real, proxy)] * 40

    def spots_the_human(prompt: str) -> str:  # answers with the slot holding "real person"
        a, b = prompt.split("Conversation A:")[1].split("Conversation B:")
        return "A" if "real person" in a else "B"

    fooled = realism.pairwise_indistinguishability(pairs, ScriptedBackend(spots_the_human), seed=3)
    assert np.all(fooled.scores < 0.1)  # the judge is never fooled: the proxy loses every time
    always_a = realism.pairwise_indistinguishability(pairs, ScriptedBackend(lambda p: "A"), seed=3)
    assert 0.3 < always_a.scores.mean() < 0.7  # a position-biased judge averages out over seeded flips
    as_json = realism.pairwise_indistinguishability(
        pairs[:2], ScriptedBackend(lambda p: '{"reasoning": "hmm", "verdict": "Tie"}'), seed=3, mode="json")
    assert as_json.scores.tolist() == [0.5, 0.5]


def test_json_judges_keep_abstentions_with_raw_text():
    conversation = [{"role": "user", "content": "hey"}, {"role": "assistant", "content": "hi"}]
    verdicts = realism.rubric_and_reason([conversation], ScriptedBackend(lambda p: "looks human to me"), mode="json")
    assert np.isnan(verdicts.scores[0]) and verdicts.abstentions == 1 and verdicts.raw == ["looks human to me"]
    scored = realism.gteval([(conversation, conversation)], ScriptedBackend(lambda p: '{"score": 1.7}'), mode="json")
    # A score off the asked-for scale is an abstention with its text, not clipped into a confident 1.
    assert np.isnan(scored.scores[0]) and scored.raw == ['{"score": 1.7}']
    assert realism.gteval([(conversation, conversation)], ScriptedBackend(lambda p: '{"score": 0.25}'),
                          mode="json").scores.tolist() == [0.25]


def test_controls_pair_different_conversations_and_calibration_uses_them():
    pairs = realism.control_pairs(list("abcdef"), seed=2)
    assert all(a != b for a, b in pairs) and sorted(b for _, b in pairs) == list("abcdef")
    assert realism.calibrated(0.65, hh=0.9, pp=0.4) == pytest.approx(0.5)
    assert realism.calibrated(0.2, hh=0.9, pp=0.4) == 0.0 and np.isnan(realism.calibrated(0.5, 0.5, 0.5))


def test_summary_intervals_and_judge_human_correlation():
    rng = np.random.default_rng(0)
    values = rng.normal(0.6, 0.1, 200)
    result = summarise(values, bootstrap=500)
    assert result["t_low"] < 0.6 < result["t_high"] and result["boot_low"] < result["mean"] < result["boot_high"]
    assert result["t_high"] - result["t_low"] == pytest.approx(result["boot_high"] - result["boot_low"], rel=0.25)
    human = rng.random(50)
    correlation = correlation_with_humans(human + rng.normal(0, 0.05, 50), human, bootstrap=200)
    assert correlation.spearman > 0.9 and correlation.kendall > 0.7 and correlation.n == 50
    assert correlation.spearman_low < correlation.spearman < correlation.spearman_high


def test_real_mirror_sets_and_human_labels(real_data_dir):
    from evalkit.userproxy.data import MIRROR_SETS, load_human_labels, load_mirror_set

    sizes = {name: len(load_mirror_set(name, data_dir=real_data_dir)[0]) for name in MIRROR_SETS}
    assert sizes == {"chatbot_arena": 195, "clariq": 200, "oasst1": 200, "qulac": 200}
    labels = load_human_labels(data_dir=real_data_dir)
    assert len(labels["gteval"]) == 100 and set(labels["pi"]["human_label"]) <= {"A", "B", "Tie"}
    published = {r["metric_name"]: r["spearman_rho"] for r in labels["published"]}
    assert published["metric:judge/gteval"] == pytest.approx(0.697, abs=1e-3)


def test_mirrorbench_lexical_mode_matches_values_worked_by_hand():
    """o200k_base ids, turns joined by one space, the restored opening query left out, short texts scored."""
    tokenize = lexical.o200k_tokenizer()
    encoding_pieces = ["the", " map", " the", " map"]  # a leading space makes " the" another type than "the"
    assert tokenize("the map the map") == [tokenize(piece)[0] for piece in encoding_pieces]
    restored = [{"role": "user", "content": "library map"}, {"role": "assistant", "content": "which floor?"},
                {"role": "user", "content": "the map the map"}]
    plain = [{"role": "user", "content": "a b c d e"}, {"role": "assistant", "content": "ok"}]
    proxy = [{"role": "user", "content": "Yes"}, {"role": "assistant", "content": "ok"},
             {"role": "user", "content": "yes"}]
    faithful = evaluate.lexical_z_scores([restored, plain], [proxy], tokenize, min_tokens=5,
                                         mode=lexical.LEXICAL_MODES["mirrorbench"], topic_restored=[True, False])
    # Humans: "the map the map" -> 3 types / 4 tokens: MATTR = HD-D = 3/4 (shorter than window and draw),
    # Yule's K = 1e4 * (1*2 + 4*1 - 4) / 16 = 1250; "a b c d e" -> 5 / 5: 1.0, 1.0, 0. Proxy: "Yes yes" -> 2 / 2.
    assert faithful.at[0, "mattr_human_mean"] == pytest.approx((0.75 + 1.0) / 2)
    assert faithful.at[0, "hdd_human_mean"] == pytest.approx((0.75 + 1.0) / 2)
    assert faithful.at[0, "yules_k_human_mean"] == pytest.approx(625.0)
    assert faithful.at[0, "mattr_proxy"] == 1.0 and faithful.at[0, "tokens"] == 2 and faithful.at[0, "unstable"]
    assert faithful.at[0, "mattr"] == pytest.approx((1.0 - 0.875) / np.std([0.75, 1.0], ddof=1))
    assert faithful.attrs["human_unstable"] == 1  # "the map the map" has 4 tokens: scored, and flagged
    kit = evaluate.lexical_z_scores([restored, plain], [proxy], lexical.word_tokenizer, min_tokens=5,
                                    topic_restored=[True, False])
    # The kit keeps the restored query ("library map the map the map": 3 types / 6 words) and leaves a short
    # proxy text missing.
    assert kit.at[0, "mattr_human_mean"] == pytest.approx((3 / 6 + 1.0) / 2) and np.isnan(kit.at[0, "mattr"])
    # A proxy episode mirroring a conversation whose opening query was restored: its turn in that slot is left
    # out in MirrorBench's mode, as the human's is ("Yes" dropped: "yes" alone, 1 token).
    mirrored = evaluate.lexical_z_scores([restored, plain], [proxy], tokenize, min_tokens=5,
                                         mode=lexical.LEXICAL_MODES["mirrorbench"], topic_restored=[True, False],
                                         proxy_topic_restored=[True])
    assert mirrored.at[0, "tokens"] == 1 and mirrored.at[0, "mattr_proxy"] == 1.0


def test_a_job_refuses_a_tokenizer_that_contradicts_its_lexical_mode():
    from evalkit.userproxy.config import JobConfig, JobConfigError

    assert JobConfig(lexical_mode="mirrorbench", episodes=2).lexical_mode == "mirrorbench"
    with pytest.raises(JobConfigError, match="lexical_mode 'mirrorbench' tokenizes with o200k_base"):
        JobConfig.from_dict({"lexical_mode": "mirrorbench", "tokenizer": "words"})
    with pytest.raises(JobConfigError, match="lexical_mode"):
        JobConfig.from_dict({"lexical_mode": "faithful"})


def test_the_realism_figure_labels_each_row_with_the_set_s_page_name():
    import matplotlib

    matplotlib.use("Agg")
    from evalkit.userproxy.evaluate import JUDGE_METRICS, LEXICAL_METRICS, plot_realism_and_diversity

    realism = pd.DataFrame([{"dataset": d, "metric": m, "mean": 0.5, "t_low": 0.4, "t_high": 0.6, "HH": 0.5, "PP": 0.5}
                            for d in ("clariq", "my_set") for m in JUDGE_METRICS]).set_index(["dataset", "metric"])
    lexical = pd.DataFrame([{"dataset": d, "metric": m, "z": 0.0, "low": -1.0, "high": 1.0}
                            for d in ("clariq", "my_set") for m in LEXICAL_METRICS]).set_index(["dataset", "metric"])
    figure = plot_realism_and_diversity(realism, lexical, {"clariq": "ClariQ"})
    assert [label.get_text() for label in figure.axes[0].get_yticklabels()] == ["ClariQ", "my_set"]
