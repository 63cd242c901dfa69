"""Chapter 4 — PairEval: score a response by comparing it with responses from other conversations.

    s(h, r) = mean over comparison examples (h_j, r_j) of P(r is the better reply),

each comparison asked in both orders (target shown as A, then as B) and averaged, which cancels an LM judge's
position bias. The kit's pointwise judge is a fine-tuned sentence encoder (:mod:`.encoder`: all-MiniLM-L6-v2 scoring
``f(h, r)``, the cosine of the conversation's and the reply's embeddings plus a small relevance head, trained
with a pairwise Bradley-Terry loss on leak-free two-conversation pairs: the real next utterance of a
conversation against a random utterance of another dialogue, a human-written adversarial reply
(DailyDialog++) or a copy of its own context). For that judge ``P(A better than B) = sigmoid(scale * (f(A) -
f(B)))``, so the order of the two sides cannot matter and the PairEval score ranks replies as ``f`` does;
the comparative reader (:mod:`.reader`) adds a correction read from both sides at once, so for it the order
can matter and comparing can differ from scoring.
DirectEval, the pointwise baseline, is the same backbone trained on the same replies one at a time. The
paper's own method at CPU size — SmolLM2-135M fine-tuned with LoRA, asked "A or B?" (or P("Yes") for
DirectEval) — is kept beside it for comparison (:mod:`.training`, :func:`train_lm_judge`).

Modules, by concept (the :class:`~evalkit.judges.Judge` protocol every judge here answers, and
:class:`~evalkit.judges.LMJudge` over any backend, live in :mod:`evalkit.judges`): :mod:`.encoder` (the bi-encoder judge and its training), :mod:`.reader` (the comparative reader, which reads
both sides), :mod:`.training` (LoRA), :mod:`.recipes` (the named recipes every chapter trains from),
:mod:`.training_data` (the leak-free training data), :mod:`.data` and :mod:`.corpora` (corpora, attack cases,
training pairs), :mod:`.splits` (the leak cut), :mod:`.prompts`, :mod:`.scoring` (PairEval and DirectEval
scores of any judge, the reference baselines), :mod:`.metaeval` and :mod:`.schema` (the paper's six sets and
the meta-evaluation file format), :mod:`.table1`, :mod:`.analysis` (the paper's ablations as averages over the
pairwise matrix), :mod:`.comparing` (comparing against scoring, position bias) and
:mod:`.report` (the paper's targets, the attack verdicts and paired gaps). The names below are what a chapter or a user starts from;
the rest live in their modules (``pe.table1.correlation_rows``, ``pe.data.corpus_comparisons``, ...).
"""
from evalkit.paireval import (analysis, comparing, corpora, data, encoder, metaeval, prompts, reader, recipes, report,
                              schema, scoring, splits, table1, training, training_data)
from evalkit.paireval.encoder import EncoderJudge, train_encoder_judge, train_judge
from evalkit.judges.protocol import Judge
from evalkit.paireval.lm_judge import LMJudge
from evalkit.paireval.training_data import judge_data
from evalkit.paireval.metaeval import load_meta_eval_set, meta_eval_set_names
from evalkit.paireval.reader import ComparativeReader, train_reader
from evalkit.paireval.recipes import RECIPES, EncoderRecipe, JudgeRecipe
from evalkit.paireval.schema import MetaEvalFormatError, meta_evaluate, read_meta_eval, write_meta_eval
from evalkit.paireval.scoring import (compare_responses, directeval_scores, pair_preferences, paireval_scores, pairwise_matrix,
                      preference_accuracy)
from evalkit.paireval.training import train_lm_judge

__all__ = ["Judge", "LMJudge", "EncoderJudge", "ComparativeReader", "RECIPES", "JudgeRecipe", "EncoderRecipe",
           "train_judge", "train_reader", "train_lm_judge", "train_encoder_judge", "judge_data",
           "load_meta_eval_set", "meta_eval_set_names", "read_meta_eval", "write_meta_eval", "meta_evaluate",
           "MetaEvalFormatError", "paireval_scores", "directeval_scores", "pairwise_matrix", "compare_responses",
           "pair_preferences", "preference_accuracy"]
