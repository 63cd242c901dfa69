"""Chapters 1-3: UPHELD, per-turn human labels of LLM continuations against a human reference.

* :mod:`.release` and :mod:`.release_format` — the release's loader and its file format;
* :mod:`.datacard` — the data card (chapter 1);
* :mod:`.agreement` — kappa, alpha, agreement bins, noise ceilings (chapter 2);
* :mod:`.metrics`, :mod:`.llm_judges`, :mod:`.correlation`, :mod:`.ensemble`, :mod:`.multiplicity`,
  :mod:`.paper_tables` — reference metrics, the paper's LLM judges, their correlation with people,
  Mixture-of-Judges ensembles, reply multiplicity and the paper's tables (chapter 3).
"""
from evalkit.upheld.release import SUBSETS, load_upheld

__all__ = ["SUBSETS", "load_upheld"]
