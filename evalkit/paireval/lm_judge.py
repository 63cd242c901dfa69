"""An LM behind the model door as a chapter-4 judge, asked with chapter 4's prompts."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from evalkit.data.dialogue import Texts
from evalkit.judges.protocol import Position, ScoresByDirect, cross_sides
from evalkit.models import Backend, warn_if_parsed
from evalkit.paireval.prompts import PROMPT_LIMITS, PromptLimits, direct_messages, pair_messages

__all__ = ["LMJudge"]


class LMJudge(ScoresByDirect):
    """An LM behind the model door as a :class:`Judge`: "A or B?" (label probabilities of ``A`` and ``B``)
    for the pairwise questions, "Yes or No?" for DirectEval, with chapter 4's prompts cut to ``limits``.
    All prompts of one call go to the backend in one batched request; an abstention stays NaN."""

    def __init__(self, backend: Backend, *, limits: PromptLimits = PROMPT_LIMITS):
        self.backend, self.limits = backend, limits
        self.name = getattr(backend, "name", type(backend).__name__)

    def calls(self) -> list:
        """The door's call records, where the backend keeps telemetry (a :class:`~evalkit.models.CachedBackend`)."""
        telemetry = getattr(self.backend, "telemetry", None)
        return list(telemetry.records) if telemetry is not None else []

    def direct(self, contexts: Sequence[Texts], responses: Sequence[str]) -> np.ndarray:
        if len(contexts) != len(responses):
            raise ValueError(f"{len(contexts)} contexts but {len(responses)} responses")
        prompts = [direct_messages(c, r, limits=self.limits) for c, r in zip(contexts, responses)]
        results = self.backend.label_probs(prompts, ["Yes", "No"])
        warn_if_parsed(results, "DirectEval")
        return np.array([r.probs["Yes"] if r.probs is not None else np.nan for r in results])

    def _ask(self, sides: Sequence[tuple], shown: Sequence[int]) -> np.ndarray:
        """P(the first side better) for each (first_c, first_r, second_c, second_r) in the order ``shown``
        (0: first side as A, 1: as B)."""
        prompts = [pair_messages(*s, limits=self.limits) if order == 0
                   else pair_messages(s[2], s[3], s[0], s[1], limits=self.limits) for s, order in zip(sides, shown)]
        results = self.backend.label_probs(prompts, ["A", "B"]) if prompts else []
        warn_if_parsed(results, "PairEval")
        return np.array([np.nan if r.probs is None else r.probs["A" if order == 0 else "B"]
                         for r, order in zip(results, shown)], dtype=float)

    def orders(self, first_contexts, first_replies, second_contexts, second_replies) -> np.ndarray:
        sides = list(zip(first_contexts, first_replies, second_contexts, second_replies))
        return self._ask([s for s in sides for _ in (0, 1)], [o for _ in sides for o in (0, 1)]).reshape(-1, 2)

    def pairwise_matrix(self, contexts, responses, comparisons, *, positions: Position = "both") -> np.ndarray:
        sides = list(zip(*cross_sides(contexts, responses, comparisons)))
        wanted = [o for o in (0, 1) if positions == "both" or o == (0 if positions == "first" else 1)]
        matrix = np.full((len(sides), 2), np.nan)
        asked = self._ask([s for s in sides for _ in wanted], [o for _ in sides for o in wanted])
        matrix[:, wanted] = asked.reshape(len(sides), len(wanted))
        return matrix.reshape(len(contexts), len(comparisons), 2)
