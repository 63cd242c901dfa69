"""The book's name for each metric, judge and feature label the code uses, in one table.

The code keeps short labels (``bertscore_precision``, ``directeval``, ``gteval``): they are column names in the
results files, keys of judge cards and command-line arguments. A page shows the name ``book/glossary.md``
gives the same thing, so a reader meets one name per thing whichever table or sentence it is in.
:func:`display_name` maps one label, :func:`display_labels` a table's index and columns; a label the table
does not know is shown as it is, and a known label followed by a qualifier in brackets (``svm (weighted)``)
keeps the qualifier.
"""
from __future__ import annotations

from typing import Mapping

import pandas as pd

__all__ = ["DISPLAY_NAMES", "display_name", "display_labels"]

DISPLAY_NAMES: Mapping[str, str] = {
    # Reference metrics (chapter 3): a candidate reply against the human reference.
    "rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L", "rougeLsum": "ROUGE-Lsum", "rouge-l": "ROUGE-L",
    "bleu2": "BLEU-2", "embedding_cosine": "embedding cosine", "cosine": "embedding cosine",
    "bertscore_precision": "BERTScore P", "bertscore_recall": "BERTScore R", "bertscore_f1": "BERTScore F1",
    "bertscore": "BERTScore",
    # Judges.
    "judge_yes_no": "yes-or-no LM judge", "judge_likert": "Likert LM judge", "paireval": "PairEval judge",
    "directeval": "DirectEval", "encoder": "untrained encoder", "length": "reply length",
    # The reply's own lexical diversity, a feature beside the metrics.
    "candidate_mattr": "reply MATTR", "candidate_hdd": "reply HD-D", "candidate_yules_k": "reply Yule's K",
    # Ensemble learners (the Mixture-of-Judges).
    "linear": "linear", "svm": "SVM", "random_forest": "random forest",
    # User-proxy realism judges and lexical diversity (chapter 5).
    "gteval": "GTEval", "pi": "PI", "rnr": "RNR", "mattr": "MATTR", "hdd": "HD-D", "yules_k": "Yule's K",
}


def display_name(label: object) -> str:
    """The page's name of a code label; a label not in :data:`DISPLAY_NAMES` stands as it is, and a known
    label with a bracketed qualifier keeps it (the Mixture-of-Judges' weighted variants).

    >>> display_name("bertscore_precision"), display_name("directeval"), display_name("upheld-main")
    ('BERTScore P', 'DirectEval', 'upheld-main')
    >>> display_name("random_forest (weighted)"), display_name("metrics (weighted)")
    ('random forest (weighted)', 'metrics (weighted)')

    A name holds no comma, so a list of names (``a, b and c``) counts its names right:

    >>> display_name("judge_likert"), [name for name in DISPLAY_NAMES.values() if "," in name]
    ('Likert LM judge', [])
    """
    text = str(label)
    if text in DISPLAY_NAMES:
        return DISPLAY_NAMES[text]
    head, bracket, qualifier = text.partition(" (")
    return f"{DISPLAY_NAMES[head]} ({qualifier}" if bracket and head in DISPLAY_NAMES else text


def display_labels(frame: pd.DataFrame, *, columns: bool = True) -> pd.DataFrame:
    """``frame`` with the page's names in its index (and its columns unless ``columns`` is False); the values
    are untouched.

    >>> frame = pd.DataFrame({"gteval": [0.5]}, index=["rouge2"])
    >>> display_labels(frame)
             GTEval
    ROUGE-2     0.5
    >>> ensembles = pd.DataFrame({"r": [0.8, 0.7]}, index=pd.MultiIndex.from_tuples(
    ...     [("content", "svm"), ("content", "svm (weighted)")], names=["label", "ensemble"]))
    >>> display_labels(ensembles).index.tolist()
    [('content', 'SVM'), ('content', 'SVM (weighted)')]
    """
    renamed = frame.rename(index=display_name)
    return renamed.rename(columns=display_name) if columns else renamed
