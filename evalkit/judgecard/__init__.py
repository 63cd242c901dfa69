"""A report card for any dialogue judge: agreement with people on every human-scored set, beside
the human noise ceiling of the same items, with length and position biases, abstentions and cost.

* :mod:`.spec` — what is judged: :class:`JudgeSpec` from a ``--judge`` string or a YAML file;
* :mod:`.judges` — the judges, and the one :class:`CardJudge` protocol (``score``, ``orders``, ``calls``) they
  all answer;
* :mod:`.sets` — the human-scored sets in one shape (:class:`HumanSet`), their dev/test halves and ceilings;
* :mod:`.card` — :func:`judge_card` and the :class:`Card` it returns (its rows, slots, self-consistency and
  costs; each set's item scores, :meth:`Card.set_scores`); :mod:`.checks` — the length, slot and
  self-consistency checks it runs on the same items;
* :mod:`.render` — the self-contained HTML page; :mod:`.leaderboard` — judges side by side, ranked by mean
  share of the ceiling with ties called; :mod:`.verify` — what the board checks of a card before it ranks it
  (rows recomputed from the item scores, the answer key flagged); :mod:`.cli` — ``evalkit judge card`` and
  ``evalkit judge leaderboard``.

Names are imported on first use, so that ``evalkit``'s command line starts without pandas.

>>> import pandas as pd
>>> from evalkit.judgecard import from_meta_eval, judge_card
>>> frame = pd.DataFrame({"context": [["how was the trip to the coast last week"]] * 3 + [["and the food"]] * 3,
...                       "response": ["great", "it rained all week long", "fine thanks",
...                                    "good", "the fish was fresh and cheap", "ok"],
...                       "score": [4.0, 2.0, 3.0, 3.5, 4.5, 2.0]})
>>> card = judge_card("length", [from_meta_eval(frame, "toy")], half="all", bootstrap=0)
>>> row = card.rows[0]
>>> row.n, round(row.pearson, 3), row.ceiling_note
(6, 0.158, 'the file holds one score per item')
"""
from __future__ import annotations

import importlib
from typing import Any

from ._names import SET_NAMES

_HOMES = {"card": ("Card", "LabelRow", "SlotRow", "ConsistencyRow", "SetCost", "SetScores", "judge_card", "merge_cards",
                   "same_context_pairs"),
          "render": ("card_html", "card_fragment", "write_card"),
          "leaderboard": ("Standing", "standings", "standings_frame", "leaderboard_markdown", "leaderboard_html",
                          "board_sentence"),
          "verify": ("card_flags",),
          "sets": ("Ceiling", "HumanSet", "from_meta_eval", "from_upheld_labels", "load_set", "noise_ceiling",
                   "upheld_folder_set"),
          "spec": ("KINDS", "JudgeSpec", "parse_spec", "read_spec_file"),
          "judges": ("CannotScore", "CardJudge", "FunctionJudge", "Scored", "ScoresJudge", "build_judge",
                     "prefetch_lm")}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}

__all__ = ["SET_NAMES", *_WHERE]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
