"""The judges a card can hold — a metric, an encoder, an LM behind the model door, or a file of scores — each
answering the kit's one :class:`~evalkit.judges.Judge` protocol, so that the card never asks what it holds.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.data.specfile import SpecError
from evalkit.judgecard.spec import KINDS, JudgeSpec
from evalkit.judges.protocol import CannotScore, Judge, OneReplyAtATime, Scored
# A file of scores is a judge too: its own module.
from evalkit.judgecard.score_files import ScoresJudge

__all__ = ["Scored", "CannotScore", "FunctionJudge", "ScoresJudge", "PairEvalSettings", "BOOK_PAIREVAL",
           "build_judge", "prefetch_lm"]


# --------------------------------------------------------------------------- judges that score one reply at a time

def slot_wins(verdicts) -> np.ndarray:
    """Between the two ways of writing a judge's verdicts on a pair: P(the first reply wins) with it shown as A and
    shown as B (:meth:`~evalkit.judges.Judge.orders`), and P(the reply in slot A wins) with the first reply in slot
    A and with the second in slot A. The map is its own inverse, so it converts either way.

    >>> slot_wins([[0.9, 0.3]]).tolist()
    [[0.9, 0.7]]
    """
    verdicts = np.asarray(verdicts, dtype=float)
    return np.stack([verdicts[:, 0], 1.0 - verdicts[:, 1]], axis=1)


@dataclass
class FunctionJudge(OneReplyAtATime):
    """A judge made of a function of the items (metrics, and test doubles): ``function(items) -> scores``.
    ``pairwise(contexts, first, second)``, where given, makes it compare two replies to the same contexts: P(the
    reply in slot A wins) with ``first`` in slot A (column 0) and with ``second`` in slot A (column 1)."""

    name: str
    function: Any
    needs_reference: bool = False
    pairwise: Any = None

    def score(self, items: pd.DataFrame) -> Scored:
        if self.needs_reference and items["reference"].isna().any():
            missing = int(items["reference"].isna().sum())
            raise CannotScore(f"{self.name} needs a reference for every item ({missing} of {len(items)} have none)")
        return Scored(np.asarray(self.function(items), dtype=float))

    def orders(self, first_contexts, first_replies, second_contexts, second_replies):
        if self.pairwise is None:
            return None
        return slot_wins(self.pairwise(first_contexts, first_replies, second_replies))


def _rouge_l(items: pd.DataFrame) -> np.ndarray:
    from rouge_score import rouge_scorer

    from evalkit.upheld.metrics import split_sentences

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return np.array([scorer.score("\n".join(split_sentences(str(ref))), "\n".join(split_sentences(str(cand))))
                     ["rougeL"].fmeasure for ref, cand in zip(items["reference"], items["response"])])


@dataclass
class _ReferenceModelMetric:
    """BERTScore F1 or the embedding cosine of :class:`evalkit.upheld.metrics.ReferenceMetrics` (loads the encoder)."""

    column: str
    _metrics: Any = None

    def __call__(self, items: pd.DataFrame) -> np.ndarray:
        if self._metrics is None:
            from evalkit.upheld.metrics import ReferenceMetrics

            self._metrics = ReferenceMetrics()
        frame = self._metrics.score(items["reference"].astype(str).tolist(), items["response"].astype(str).tolist())
        return frame[self.column].to_numpy(dtype=float)


@dataclass(frozen=True)
class PairEvalSettings:
    """How an encoder judge is scored by comparison: ``comparisons`` examples per score drawn from a pool of
    ``pool_size`` DailyDialog validation examples, ``runs`` runs averaged, ``seed``. The defaults are chapter
    4's parameters cell (so a card's numbers can be set beside its Table 1); a parameters cell holds literals
    (papermill injects over them), so ``tests/judgecard/test_judgecard.py`` checks the two agree instead."""

    comparisons: int = 3
    pool_size: int = 8
    runs: int = 5
    seed: int = 13


BOOK_PAIREVAL = PairEvalSettings()


_JUDGE_DATA: dict[tuple, Any] = {}


def _recipe_data(recipe: Any):
    """The leak-free data of a recipe (:func:`evalkit.paireval.judge_data`, which depends on the recipe's seed
    and the data dir only), built once per process: the judges of a card run and their comparison pool share
    one leak cut, which takes seconds to build even when every judge is already in the training cache."""
    import os

    from evalkit.paireval import judge_data
    from evalkit.paireval.recipes import named_recipe

    key = (named_recipe(recipe).seed, os.environ.get("EVALKIT_DATA_DIR"))
    if key not in _JUDGE_DATA:
        _JUDGE_DATA[key] = judge_data(seed=key[0])
    return _JUDGE_DATA[key]


def _book_pool(recipe: Any, settings: PairEvalSettings) -> list:
    """Chapter 4's comparison pool: ``pool_size`` examples of the recipe's leak-free validation dialogues."""
    from evalkit.paireval.data import corpus_comparisons

    return corpus_comparisons(_recipe_data(recipe).validation, settings.pool_size, seed=settings.seed)


@dataclass
class _PairJudge:
    """A chapter-4 judge (any :class:`evalkit.paireval.Judge`: an encoder, untrained or trained, or an LM
    through :class:`~evalkit.paireval.LMJudge`): scored by PairEval against chapter 4's comparison pool
    (``method="paireval"``) or by DirectEval's P(good) (``"direct"``); both slots through its ``orders``. ``build`` and ``pool`` are called on first use (they load a model,
    train or read corpora)."""

    name: str
    build: Any
    method: str = "paireval"
    pool: Any = None
    settings: PairEvalSettings = BOOK_PAIREVAL
    _judge: Any = None
    _pool: Any = None

    def _model(self):
        if self._judge is None:
            self._judge = self.build()
        return self._judge

    def score(self, items: pd.DataFrame) -> Scored:
        from evalkit.paireval.scoring import directeval_scores
        from evalkit.paireval.table1 import judge_scores

        judge, contexts, replies = self._model(), list(items["context"]), items["response"].astype(str).tolist()
        if self.method == "direct":
            return Scored(directeval_scores(contexts, replies, judge))
        if self._pool is None:
            self._pool = self.pool()
        settings = self.settings
        result = judge_scores(pd.DataFrame({"context": contexts, "response": replies}), judge, self._pool,
                              n=settings.comparisons, runs=settings.runs, seed=settings.seed, direct=False)
        return Scored(result["paireval"], draws=tuple(np.asarray(r, dtype=float) for r in result["runs"]),
                      draws_from=f"PairEval runs of {settings.comparisons} comparison examples each "
                                 f"(pool {settings.pool_size}, seed {settings.seed})")

    def orders(self, first_contexts, first_replies, second_contexts, second_replies):
        return self._model().orders(first_contexts, first_replies, second_contexts, second_replies)

    def pairwise_matrix(self, contexts, responses, comparisons, *, positions="both"):
        return self._model().pairwise_matrix(contexts, responses, comparisons, positions=positions)

    def calls(self) -> list:
        return self._judge.calls() if self._judge is not None else []


@dataclass
class _LMJudge(OneReplyAtATime):
    """A prompt of :mod:`evalkit.upheld.llm_judges` (or one's own) through the model door; scores are expected values over
    the labels, abstentions keep their raw text; the door's telemetry gives calls, tokens and cache hits."""

    name: str
    spec: JudgeSpec
    _backend: Any = None

    def _prompt(self):
        from evalkit.upheld.llm_judges import JUDGES, PromptSpec

        if self.spec.prompt is not None:
            return JUDGES[self.spec.prompt]
        return PromptSpec(self.name, self.spec.target or "score", self.spec.template, self.spec.labels,
                          self.spec.values, generates=self.spec.generates,
                          uses_reference="{reference}" in self.spec.template)

    def backend(self):
        if self._backend is None:
            from evalkit.models import open_backend

            options = {"base_url": self.spec.base_url} if self.spec.backend == "openai" else {}
            self._backend = open_backend(self.spec.backend, self.spec.model, **options)
        return self._backend

    def readable(self, items: pd.DataFrame) -> pd.DataFrame:
        """``items`` as :func:`evalkit.upheld.llm_judges.judge` reads them; :class:`CannotScore` when the prompt shows a
        reference that some items lack."""
        prompt = self._prompt()
        if prompt.uses_reference and items["reference"].isna().any():
            raise CannotScore(f"{self.name}'s prompt shows the reference; "
                              f"{int(items['reference'].isna().sum())} of {len(items)} items have none")
        return pd.DataFrame({"item_id": items["item_id"].to_numpy(), "history": list(items["history"]),
                             "reference": items["reference"].fillna("").astype(str).to_numpy(),
                             "candidate": items["response"].astype(str).to_numpy()})

    def score(self, items: pd.DataFrame) -> Scored:
        from evalkit.upheld.llm_judges import judge

        result = judge(self.readable(items), self._prompt(), self.backend())
        return Scored(result["score"].to_numpy(dtype=float), tuple(result["raw_text"]))

    def calls(self) -> list:
        backend = self._backend
        return list(backend.telemetry.records) if backend is not None else []


def _pairwise_lm(spec: JudgeSpec):
    """Chapter 4's pairwise LM judge: zero-shot through the spec's door (``lm-pair``), or SmolLM2 with the LoRA
    adapter of the spec's recipe (``lora``: trained once, then read from the cache)."""
    from evalkit.models import open_backend
    from evalkit.paireval.lm_judge import LMJudge

    if spec.kind == "lora":
        from evalkit.paireval.training import train_lm_judge

        return LMJudge(open_backend("transformers", None, adapter=str(train_lm_judge(spec.recipe).adapter)))
    options = {"base_url": spec.base_url} if spec.backend == "openai" else {}
    return LMJudge(open_backend(spec.backend, spec.model, **options))


def prefetch_lm(specs: Sequence[JudgeSpec], sets: Sequence[Any], *, half: str = "test",
                items_per_set: int | None = None, seed: int = 0, data_dir: Any = None) -> dict[str, float]:
    """Ask the model door once for every LM prompt judge among ``specs`` that reads label probabilities and
    shares a door (same backend, model and server) with another, on the items their cards will score: each of
    ``sets`` (as :func:`~evalkit.judgecard.judge_card` takes them) drawn by the same
    :func:`~evalkit.judgecard.sets.card_items` with the same ``half``, ``items_per_set`` and ``seed``. The
    answers land in the call cache, from which the cards then read them: the prompts of two judges about one
    item share its conversation and replies, and one call computes that text once for both
    (:func:`evalkit.upheld.llm_judges.run_judges`). Returns the seconds spent per door that was asked; a judge or set that
    a card cannot score is left to the card, which says why."""
    import time

    from evalkit.upheld.llm_judges import run_judges
    from evalkit.judgecard.sets import card_items

    doors: dict[tuple, list[_LMJudge]] = {}
    for spec in specs:
        judge = build_judge(spec)
        if isinstance(judge, _LMJudge) and not judge._prompt().generates:
            doors.setdefault((spec.backend, spec.model, spec.base_url), []).append(judge)
    groups = [group for group in doors.values() if len(group) >= 2]  # one judge alone: nothing to share
    drawn = [card_items(entry, half=half, items_per_set=items_per_set, seed=seed, data_dir=data_dir)
             for entry in sets] if groups else []
    seconds = {}
    for group in groups:
        started, asked = time.perf_counter(), False
        for human_set in drawn:
            items = human_set.items
            if len(items) < 3:
                continue  # the card skips such a set
            readable = []
            for judge in group:
                try:
                    readable.append((judge, judge.readable(items)))
                except CannotScore:
                    continue
            if len(readable) >= 2:
                run_judges(readable[0][1], [judge._prompt() for judge, _ in readable], group[0].backend())
                asked = True
        if asked:
            seconds[group[0].backend().name] = time.perf_counter() - started
    return seconds


def build_judge(spec: JudgeSpec) -> Judge:
    """The judge a spec names; nothing is loaded or trained until it first scores."""
    from evalkit.paireval.scoring import bleu2, length_scores

    name = spec.title
    if spec.kind == "length":
        return FunctionJudge(name, lambda items: length_scores(items["response"]))
    if spec.kind == "bleu2":
        return FunctionJudge(name, lambda items: bleu2(items["reference"], items["response"]), needs_reference=True)
    if spec.kind == "rouge-l":
        return FunctionJudge(name, _rouge_l, needs_reference=True)
    if spec.kind in ("cosine", "bertscore"):
        column = "embedding_cosine" if spec.kind == "cosine" else "bertscore_f1"
        return FunctionJudge(name, _ReferenceModelMetric(column), needs_reference=True)
    if spec.kind == "encoder":
        from evalkit.paireval.encoder import EncoderJudge

        return _PairJudge(name, EncoderJudge, pool=lambda: _book_pool("book", BOOK_PAIREVAL))
    if spec.kind in ("paireval", "directeval"):
        from evalkit.paireval import EncoderJudge, train_judge

        kind = "pairwise" if spec.kind == "paireval" else "direct"
        return _PairJudge(name, lambda: EncoderJudge.from_training(train_judge(spec.recipe, kind=kind,
                                                                               data=_recipe_data(spec.recipe))),
                             method="paireval" if kind == "pairwise" else "direct",
                             pool=lambda: _book_pool(spec.recipe, BOOK_PAIREVAL))
    if spec.kind == "reader":
        from evalkit.paireval.reader import train_reader

        return _PairJudge(name, lambda: train_reader(spec.recipe, data=_recipe_data(spec.recipe))[0],
                          pool=lambda: _book_pool(spec.recipe, BOOK_PAIREVAL))
    if spec.kind == "lm":
        return _LMJudge(name, spec)
    if spec.kind in ("lm-pair", "lora"):
        return _PairJudge(name, lambda: _pairwise_lm(spec), pool=lambda: _book_pool(spec.recipe or "book", BOOK_PAIREVAL))
    raise SpecError(f"{spec.source or 'judge'}: kind {spec.kind!r} cannot be built here (known: {', '.join(KINDS)})")

