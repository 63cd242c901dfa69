"""Realism judges against people: MirrorBench's human-labelled GTEval and PI items, every judge's scores on
them, agreement, paired differences, and the choice of the chapter's realism judges on the dev half.

MirrorBench published 100 GTEval items (a real conversation and a proxy's, rated for how *similar* the proxy
user is to the real one) and 100 PI items (two conversations, one real: which user seems human?).
:func:`human_label_items` takes one half of them (:func:`evalkit.stats.halves.split_mirrorbench_labels`: a real
conversation is in one half across both tables). Judges are LM judges asked through the model door
(:func:`human_label_scores`), the trained realism encoder and the length baseline
(:func:`evalkit.userproxy.realism_encoder.label_item_scores`), and — for GTEval, whose raters know which user
is real — chapter 3's reference metrics with the real user's turns as the reference (:func:`reference_scores`).
:func:`choose_realism_judges` picks one judge per metric on the dev half by :mod:`evalkit.stats.selection`'s rule
(Spearman: the labels are ordinal); the test half reports.
"""
from __future__ import annotations

from typing import Any, Callable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.models import Backend
from evalkit.stats.selection import Decision, choose_on_dev
from evalkit.userproxy.realism import Mode, gteval, pairwise_indistinguishability
from evalkit.userproxy.realism_data import user_side

__all__ = ["METRICS", "REFERENCE_METRICS", "human_label_items", "human_label_scores", "reference_scores",
           "human_label_agreement", "human_label_differences", "choose_realism_judges", "realism_features", "adapted_realism"]

METRICS = {"gteval": "GTEval", "pi": "PI"}
"""The labelled metrics: the key a judge's scores use, and the name tables use."""

REFERENCE_METRICS = {"ROUGE-1 to the real user": "rouge1", "cosine to the real user": "embedding_cosine",
                     "BERTScore to the real user": "bertscore_f1"}
"""GTEval judges that read the real user as the reference (name -> column of
:meth:`evalkit.upheld.metrics.ReferenceMetrics.score`), cheapest first: word overlap, one embedding per side, token
alignment."""


def human_label_items(labels: dict[str, Any], n: int | None, *, seed: int = 0,
                      half: Literal["test", "dev", "all"] = "test") -> dict[str, Any]:
    """``n`` of MirrorBench's labelled GTEval and PI items (None: all) of ``half`` (the test half by default;
    ``all`` for every item), with what scoring them needs:
    ``gteval`` (items), ``gteval_pairs`` ((real, proxy) conversations), ``pi`` (items, with ``proxy_win``),
    ``pi_pairs`` ((real, proxy) as labelled), ``pi_slots`` (the proxy's slot, A or B), ``pi_human`` (the
    proxy's win by the human label: 1, 0.5 for a tie, 0) and, for a dev or test half, ``halves`` (metric ->
    the :class:`~evalkit.stats.halves.DevHalf` or ``TestHalf`` the items are, for :func:`choose_realism_judges`)."""
    if half not in ("test", "dev", "all"):
        raise ValueError(f"half must be test, dev or all, not {half!r}")
    win = lambda pi: [1.0 if h == s else 0.5 if h == "Tie" else 0.0  # noqa: E731
                      for h, s in zip(pi["human_label"], pi["ground_truth_synthetic_slot"])]
    halves: dict[str, Any] = {}
    if half == "all":
        take = lambda frame: frame if n is None else frame.sample(min(n, len(frame)), random_state=seed)  # noqa: E731
        gt, pi = take(labels["gteval"]), take(labels["pi"])
        pi = pi.assign(proxy_win=win(pi))
    else:
        from evalkit.stats.halves import split_mirrorbench_labels

        split = split_mirrorbench_labels(labels)
        index = 1 if half == "test" else 0
        gt_half = split["mirrorbench-gteval"][index].sample(n, seed=seed)
        pi_half = split["mirrorbench-pi"][index].sample(n, seed=seed)
        pi_half = type(pi_half)(pi_half.name, pi_half.items.assign(proxy_win=win(pi_half.items)), kind=pi_half.kind)
        halves = {"gteval": gt_half, "pi": pi_half}
        gt, pi = gt_half.items.drop(columns="group"), pi_half.items.drop(columns="group")
    slots = pi["ground_truth_synthetic_slot"].tolist()
    return {"gteval": gt, "gteval_pairs": list(zip(gt["real_conversation"], gt["synthetic_conversation"])),
            "pi": pi, "pi_slots": slots, "halves": halves,
            "pi_pairs": [(b, a) if slot == "A" else (a, b)
                         for a, b, slot in zip(pi["conversation_a"], pi["conversation_b"], slots)],
            "pi_human": pi["proxy_win"].to_numpy(dtype=float)}


def human_label_scores(items: dict[str, Any], judges: dict[str, Backend], *, mode: Mode = "probs",
                       samples: int = 1) -> dict[str, dict[str, np.ndarray]]:
    """Each judge's GTEval and PI scores of MirrorBench's labelled items (:func:`human_label_items`), in the
    items' order: name -> {"gteval": ..., "pi": ...} (NaN for an abstention)."""
    return {name: {"gteval": np.asarray(gteval(items["gteval_pairs"], judge, mode=mode, samples=samples).scores,
                                        dtype=float),
                   "pi": np.asarray(pairwise_indistinguishability(items["pi_pairs"], judge, mode=mode, samples=samples,
                                                                  slots=items["pi_slots"]).scores, dtype=float)}
            for name, judge in judges.items()}


def reference_scores(items: dict[str, Any], metrics: Any, user_turns: int | None) -> dict[str, dict[str, np.ndarray]]:
    """GTEval scores with the real user as the reference: each of :data:`REFERENCE_METRICS` between the first
    ``user_turns`` user turns of the real conversation (the reference) and of the proxy's (the candidate), the
    same turns the trained encoder and the length baseline read. ``metrics`` is an
    :class:`evalkit.upheld.metrics.ReferenceMetrics`. PI has no such score: its judge is not told which user is real.

    >>> class Overlap:  # a stand-in for ReferenceMetrics: the share of candidate words found in the reference
    ...     def score(self, references, candidates):
    ...         share = [len(set(c.split()) & set(r.split())) / len(c.split()) for r, c in zip(references, candidates)]
    ...         return pd.DataFrame({column: share for column in REFERENCE_METRICS.values()})
    >>> user = lambda text: [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
    >>> items = {"gteval_pairs": [(user("need bus times"), user("need bus times please")), (user("hi"), user("yo"))]}
    >>> reference_scores(items, Overlap(), 2)["ROUGE-1 to the real user"]["gteval"].tolist()
    [0.75, 0.0]
    """
    real = [user_side(conversation, user_turns) for conversation, _ in items["gteval_pairs"]]
    proxy = [user_side(conversation, user_turns) for _, conversation in items["gteval_pairs"]]
    table = metrics.score(real, proxy)
    return {name: {"gteval": table[column].to_numpy(dtype=float)} for name, column in REFERENCE_METRICS.items()}


def _human(items: Mapping[str, Any], metric: str) -> Any:
    return items["gteval"]["human_label"] if metric == "gteval" else items["pi_human"]


def human_label_agreement(items: dict[str, Any], judges: dict[str, Backend], *, mode: Mode = "probs",
                          samples: int = 1, seed: int = 0, bootstrap: int = 1000,
                          scored: dict[str, dict[str, Sequence[float]]] | None = None) -> pd.DataFrame:
    """Each judge's agreement with MirrorBench's human labels on ``items`` (:func:`human_label_items`), beside
    the published judge's on the same items: Spearman, Pearson and Kendall with bootstrap intervals and n.

    ``scored`` adds judges whose scores are already computed (:func:`human_label_scores`, a trained encoder,
    a baseline, :func:`reference_scores`: name -> {"gteval": ..., "pi": ...}, one score per item in the items'
    order; a judge may score one metric only)."""
    from evalkit.stats import correlation_with_humans

    rows = {}
    for name, scores in {**human_label_scores(items, judges, mode=mode, samples=samples), **(scored or {})}.items():
        for metric, label in METRICS.items():
            if metric in scores:
                rows[f"{label}, {name}"] = correlation_with_humans(scores[metric], _human(items, metric),
                                                                   bootstrap=bootstrap, seed=seed).as_dict()
    for metric, label in METRICS.items():
        rows[f"{label}, published judge (same items)"] = correlation_with_humans(
            items[metric]["judge_score"], _human(items, metric), bootstrap=bootstrap, seed=seed).as_dict()
    return pd.DataFrame(rows).T


def human_label_differences(items: dict[str, Any], scores: dict[str, dict[str, Sequence[float]]], judge: str,
                            others: Sequence[str], *, bootstrap: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Spearman of ``judge`` minus that of each of ``others`` with the human labels, per metric both score, on
    the same items, with a paired bootstrap interval (:func:`evalkit.stats.correlation_difference`)."""
    from evalkit.stats import correlation_difference

    rows = []
    for metric, label in METRICS.items():
        for other in others:
            if metric not in scores[judge] or metric not in scores[other]:
                continue
            result = correlation_difference(scores[judge][metric], scores[other][metric], _human(items, metric),
                                            bootstrap=bootstrap, seed=seed, kind="spearman")
            rows.append({"metric": label, "other": other, "difference": result.difference, "low": result.low,
                         "high": result.high, "n": result.n, "clear": result.clear})
    return pd.DataFrame(rows, columns=["metric", "other", "difference", "low", "high", "n", "clear"]).set_index(
        ["metric", "other"])


def choose_realism_judges(items: dict[str, Any],
                          score: Callable[[dict[str, Any]], Mapping[str, Mapping[str, Sequence[float]]]],
                          candidates: Mapping[str, Sequence[str]], *, bootstrap: int = 1000,
                          seed: int = 0) -> dict[str, Decision]:
    """One realism judge per metric (``candidates``: metric key, ``gteval`` or ``pi`` -> judge names, cheapest
    first; the first, e.g. the length baseline, is the incumbent), chosen on the **dev** half ``items``
    (:func:`human_label_items` with ``half="dev"``; a test half is refused) by
    :func:`evalkit.stats.selection.choose_on_dev` with Spearman: a later judge replaces the incumbent only when its
    Spearman is higher by a paired interval (real conversations resampled whole) that excludes 0.

    ``score`` computes the judges' scores from the items it is given (as for :func:`human_label_agreement`:
    name -> {"gteval": ..., "pi": ...}); it is called here on ``items``, so the scores a choice reads are
    those of the dev items and no others.

    >>> from evalkit.stats.halves import DevHalf
    >>> rng = np.random.default_rng(0)
    >>> label = rng.normal(size=60)
    >>> half = DevHalf("mirrorbench-gteval", pd.DataFrame({"human_label": label, "group": range(60)}))
    >>> judges = lambda chosen: {"length": {"gteval": rng.normal(size=60)},
    ...                          "good": {"gteval": chosen["halves"]["gteval"].items["human_label"] + rng.normal(size=60) / 2}}
    >>> choose_realism_judges({"halves": {"gteval": half}}, judges, {"gteval": ["length", "good"]},
    ...                       bootstrap=200)["gteval"].choice
    'good'
    """
    unknown = set(candidates) - set(METRICS)
    if unknown:
        raise ValueError(f"realism metrics are {' and '.join(METRICS)}, not {sorted(unknown)}")
    halves = items.get("halves", {})
    missing = [METRICS[metric] for metric in candidates if metric not in halves]
    if missing:
        raise ValueError(f"no dev half of {', '.join(missing)} in the items: take them with "
                         "human_label_items(..., half='dev')")
    scores = score(items)
    decisions = {}
    for metric, names in candidates.items():
        half = halves[metric]
        lacking = [name for name in names if metric not in scores.get(name, {})]
        if lacking:
            raise KeyError(f"no {METRICS[metric]} scores of {lacking} (scored: {sorted(scores)})")
        column = "human_label" if metric == "gteval" else "proxy_win"
        decisions[metric] = choose_on_dev(
            {half.name: half}, {(name, half.name): scores[name][metric] for name in names}, list(names),
            question=f"Which {METRICS[metric]} judge does the chapter adopt?", human=column, bootstrap=bootstrap,
            seed=seed, kind="spearman")
    return decisions


def realism_features(scores: Mapping[str, Mapping[str, Sequence[float]]], metric: str) -> pd.DataFrame:
    """The judges' scores of one metric (``gteval`` or ``pi``) as an adapted judge's features, one column per
    judge that scores it, in the items' order."""
    return pd.DataFrame({name: np.asarray(by_metric[metric], dtype=float) for name, by_metric in scores.items()
                         if metric in by_metric})


def adapted_realism(dev_items: dict[str, Any], dev_scores: Mapping[str, Mapping[str, Sequence[float]]],
                    test_items: dict[str, Any], test_scores: Mapping[str, Mapping[str, Sequence[float]]],
                    priors: Mapping[str, str], *, draws: int = 20, bootstrap: int = 1000,
                    seed: int = 0) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The realism judges adapted to MirrorBench's labels: per metric, an adapted judge
    (:mod:`evalkit.judges.adapted`) over the judges' scores, shrunk toward ``priors[metric]`` (the judge the dev half
    chose), fitted on the dev items (:func:`human_label_items` with ``half="dev"``) and scored on the test items.
    Returns the label-budget curve (budgets 0, 10, 25 and every dev item; the gain in Spearman, the labels being
    ordinal) and the test items' scores of the judge fitted on every dev item, per metric."""
    from evalkit.judges.adapted import budget_predictions, label_budget_curve

    curves, scores = [], {}
    for metric, prior in priors.items():
        human = "human_label" if metric == "gteval" else "proxy_win"
        dev_half, test_half = dev_items["halves"][metric], test_items["halves"][metric]
        dev_f, test_f = realism_features(dev_scores, metric), realism_features(test_scores, metric)
        curve = label_budget_curve(dev_half, dev_f, test_half, test_f, prior=prior, budgets=(0, 10, 25, None),
                                   draws=draws, bootstrap=bootstrap, seed=seed, human=human, kind="spearman")
        curves.append(curve.assign(metric=METRICS[metric], prior=prior))
        scores[metric] = budget_predictions(dev_half, dev_f, test_f, prior=prior, k=None, seed=seed, human=human)[0][0]
    return pd.concat(curves, ignore_index=True), scores
