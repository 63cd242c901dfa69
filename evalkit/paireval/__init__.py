"""Chapter 4 — PairEval: score a response by comparing it with responses from other conversations.

    s(h, r) = mean over comparison examples (h_j, r_j) of P(r is the better reply),

each comparison asked in both orders (target shown as A, then as B) and averaged, which cancels an LM judge's
position bias. The kit's judge is a fine-tuned sentence encoder (:mod:`.encoder`: all-MiniLM-L6-v2 scoring
``f(h, r)``, the cosine of the conversation's and the reply's embeddings plus a small relevance head, trained
with a pairwise Bradley-Terry loss on leak-free two-conversation pairs: the real next utterance of a
conversation against a random utterance of another dialogue, a human-written adversarial reply
(DailyDialog++) or a copy of its own context). For that judge ``P(A better than B) = sigmoid(scale * (f(A) -
f(B)))``, so the order of the two sides cannot matter and the PairEval score ranks replies as ``f`` does.
DirectEval, the pointwise baseline, is the same backbone trained on the same replies one at a time. The
paper's own method at CPU size — SmolLM2-135M fine-tuned with LoRA, asked "A or B?" (or P("Yes") for
DirectEval) — is kept beside it for comparison (:mod:`.training`, :func:`train_lm_judge`).

Modules: :mod:`.data` (corpora, attack cases, training pairs), :mod:`.splits` (the leak cut),
:mod:`.recipes` (the named judge recipes every chapter trains from), :mod:`.encoder`, :mod:`.prompts`,
:mod:`.scoring`, :mod:`.training` (LoRA), :mod:`.metaeval` and :mod:`.table1` (the paper's six sets and its
Table 1), :mod:`.report` (the chapter's generated findings), :mod:`.calibration`, :mod:`.schema` (the
meta-evaluation file format) and :mod:`.analysis` (the paper's ablations as averages over the pairwise
matrix). Everything public is importable from ``evalkit.paireval``.
"""
from .analysis import (PAPER, accuracy_by_group, comparison_runs, correlations, enriched_sample, exhaustive_matrix,
                       ranking_accuracy, summarise_runs)
from .calibration import apply_temperature, expected_calibration_error, fit_temperature, reliability_table
from .data import (KHALID_LEE_ATTACKS, chitchat_dialogues, corpus_comparisons, load_dailydialog,
                   load_dailydialog_plusplus, load_khalid_lee, pointwise_examples, read_dailydialog,
                   read_dailydialog_plusplus, read_khalid_lee, training_corpus, training_pairs)
from .prompts import PROMPT_LIMITS, PromptLimits, direct_messages, pair_messages
from .schema import (META_EVAL_COLUMNS, MetaEvalFormatError, meta_evaluate, read_meta_eval, upheld_contexts,
                     upheld_meta_eval, write_meta_eval)
from .encoder import (BACKBONES, EncoderJudge, EncoderTrainingRun, backbone_path, pair_accuracy, train_encoder_judge,
                      train_judge)
from .judge import Judge, LMJudge
from .judge_data import JudgeData, judge_data, split_dailydialog_plusplus_dev, validation_pairs
from .metaeval import META_EVAL_SETS, MetaEvalSet, load_meta_eval_set, meta_eval_set_names
from .recipes import RECIPES, JudgeRecipe, train_lm_judge
from .scoring import (bleu2, compare_responses, directeval_scores, length_scores, pair_preferences, paireval_scores,
                      pairwise_matrix, preference_accuracy, score_frame, upheld_judge_features)
from .report import TARGETS, adopted_line, attack_verdicts, chapter4_summary, paired_gaps, target_verdict
from .table1 import ENCODER_METHODS, baseline_scores, correlation_rows, encoder_method_scores, judge_scores, paper_table1, sample_items, table1_view
from .splits import LeakReport, leaked_units, remove_held_out
from .training import TrainingRun, train_lora

__all__ = ["upheld_judge_features", "PROMPT_LIMITS", "PromptLimits", "read_dailydialog", "load_dailydialog", "chitchat_dialogues",
           "training_corpus", "read_dailydialog_plusplus", "load_dailydialog_plusplus", "training_pairs",
           "pointwise_examples", "pair_messages", "direct_messages", "pairwise_matrix", "paireval_scores",
           "compare_responses", "directeval_scores", "TrainingRun", "train_lora", "fit_temperature",
           "apply_temperature", "expected_calibration_error", "reliability_table", "MetaEvalFormatError",
           "META_EVAL_COLUMNS", "read_meta_eval", "write_meta_eval", "upheld_meta_eval", "meta_evaluate",
           "read_khalid_lee", "load_khalid_lee", "KHALID_LEE_ATTACKS", "bleu2", "Judge", "LMJudge",
           "comparison_runs", "exhaustive_matrix", "correlations", "ranking_accuracy", "enriched_sample",
           "corpus_comparisons", "score_frame", "summarise_runs", "accuracy_by_group", "PAPER",
           "split_dailydialog_plusplus_dev", "upheld_contexts", "EncoderJudge",
           "EncoderTrainingRun", "pair_accuracy", "train_encoder_judge", "META_EVAL_SETS", "MetaEvalSet",
           "load_meta_eval_set", "meta_eval_set_names", "RECIPES", "JudgeData", "JudgeRecipe", "judge_data",
           "train_judge", "train_lm_judge", "validation_pairs", "length_scores", "LeakReport", "leaked_units",
           "remove_held_out", "pair_preferences", "preference_accuracy", "baseline_scores", "correlation_rows",
           "judge_scores", "ENCODER_METHODS", "encoder_method_scores", "paper_table1", "sample_items", "table1_view", "TARGETS", "chapter4_summary", "adopted_line", "BACKBONES", "backbone_path", "attack_verdicts", "paired_gaps",
           "target_verdict"]
