"""Judges: the protocol every dialogue judge answers, and the judge that learns from people's labels.

* :mod:`.protocol` — :class:`Judge`, the one protocol of every judge (``score`` items; ``orders`` and
  ``pairwise_matrix`` where it compares two replies; ``calls``), :class:`Scored`, and the halves its
  implementations share;
* :mod:`.adapted` — a judge fitted on k of a set's own labels, shrunk toward the zero-shot judge, and the
  label-budget curve.

The judges themselves live with the chapter that owns them: the trained encoders, the comparative reader and
the LM judge in :mod:`evalkit.paireval`, UPHELD's prompted judges in :mod:`evalkit.upheld.llm_judges`, the report card's
adapters in :mod:`evalkit.judgecard.judges`.
"""
from evalkit.judges.protocol import CannotScore, Judge, OneReplyAtATime, Position, Scored, ScoresByDirect

__all__ = ["Judge", "Scored", "CannotScore", "OneReplyAtATime", "ScoresByDirect", "Position"]
