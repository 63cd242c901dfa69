"""A report card for any dialogue judge: agreement with people on every human-scored set, beside
the human noise ceiling of the same items, with length and position biases, abstentions and cost.

* :mod:`.spec` — what is judged: :class:`JudgeSpec` from a ``--judge`` string or a YAML file;
* :mod:`.judges` — the judges a card can hold (metrics, encoders, LM prompts, score files), each answering the
  kit's one :class:`~evalkit.judges.Judge` protocol;
* :mod:`.sets` — the human-scored sets in one shape (:class:`HumanSet`), their dev/test halves and ceilings;
* :mod:`.card` — :func:`judge_card` and the :class:`Card` it returns (its rows, slots, self-consistency and
  costs; each set's item scores, :meth:`Card.set_scores`); :mod:`.checks` — the length, slot and
  self-consistency checks it runs on the same items;
* :mod:`.render` — the self-contained HTML page; :mod:`.leaderboard` — judges side by side, ranked by mean
  share of the ceiling with ties called; :mod:`.verify` — what the board checks of a card before it ranks it
  (rows recomputed from the item scores, the answer key flagged); :mod:`.cli` — ``evalkit judge card`` and
  ``evalkit judge leaderboard``.

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

from evalkit.judgecard._names import SET_NAMES
from evalkit.judgecard.card import Card, judge_card, merge_cards
from evalkit.judgecard.judges import CannotScore, FunctionJudge, Scored, ScoresJudge, build_judge, prefetch_lm
from evalkit.judgecard.board_pages import board_sentence, leaderboard_html, leaderboard_markdown
from evalkit.judgecard.leaderboard import standings, standings_frame
from evalkit.judgecard.render import card_fragment, card_html, write_card
from evalkit.judgecard.sets import HumanSet, from_meta_eval, load_set, noise_ceiling, upheld_folder_set
from evalkit.judgecard.spec import JudgeSpec, parse_spec, read_spec_file
from evalkit.judgecard.verify import card_flags

__all__ = ["SET_NAMES", "Card", "judge_card", "merge_cards", "CannotScore", "FunctionJudge", "Scored",
           "ScoresJudge", "build_judge", "prefetch_lm", "board_sentence", "leaderboard_html", "leaderboard_markdown", "standings",
           "standings_frame", "card_fragment", "card_html", "write_card", "HumanSet", "from_meta_eval", "load_set",
           "noise_ceiling", "upheld_folder_set", "JudgeSpec", "parse_spec", "read_spec_file", "card_flags"]
