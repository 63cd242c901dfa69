"""Chapter 3's exercises: transfer in the other direction, and an interval's width against the sample size.

Expected values are recomputed from the chapter's evaluation frames (``frames``, ``judged``, ``METRICS``)
with :mod:`evalkit.upheld.ensemble` and :func:`evalkit.stats.correlation_with_humans`. The metric scores need the
models, so these checks take them from the notebook; the tests exercise them on small frames they build.
"""
from __future__ import annotations

import numpy as np

from evalkit.course.core import Exercise, Work, Wrong, close, number
from evalkit.course.core import _as_dict, _listing, _norm_key

CHAPTER = "03_metric_correlation"
ENSEMBLES = ("linear", "svm", "random_forest")
#: A transfer r's tolerance: the linear and SVM fits are deterministic; the random forest's r moves with its
#: seed by about 0.01. A wrong direction, label or feature set moves r by more.
TRANSFER_TOLERANCE = 0.02
#: A width ratio's relative tolerance: the bootstrap's percentile bounds move with the resamples (a few per
#: cent of the width each); a Fisher-z or another bootstrap's interval is within it; the inverted ratio is not.
WIDTH_TOLERANCE = 0.20
SIZE_TOLERANCE = 0.01  # relative: n counted with or without the few rows a metric left unscored


def _given_transfer(work: Work) -> dict:
    raw = _as_dict(work["reverse_transfer"], "reverse_transfer", "the transfer r per ensemble")
    given = {}
    for key, value in raw.items():
        if isinstance(key, tuple) and len(key) == 2:  # a column of ensemble_table: (label, ensemble)
            if _norm_key(key[0]) != "content":
                continue
            key = key[1]
        given[_norm_key(key)] = value
    names = [f"{name}{suffix}" for name in ENSEMBLES for suffix in ("", " (weighted)")]
    missing = [name for name in ENSEMBLES if name not in given]
    if missing:
        raise Wrong(f"`reverse_transfer` should hold the UPHELD content transfer r of {_listing(ENSEMBLES)} "
                    f"(weighted ones may be added); {_listing(missing)} missing")
    unknown = [key for key in given if key not in names]
    if unknown:
        raise Wrong(f"`reverse_transfer` has keys that name no ensemble: {_listing(unknown[:3])} (ensembles: "
                    f"{_listing(names)})")
    return {key: number(value, f"reverse_transfer[{key!r}]", low=-1, high=1, what="a correlation")
            for key, value in given.items()}


def _transfer_expected(work: Work, key: str) -> float:
    return work.memo(("transfer", key), lambda: _transfer_r(work, key))


def _transfer_r(work: Work, key: str) -> float:
    from evalkit.upheld import ensemble

    frames, features = work.chapter("frames")["content"], list(work.chapter("METRICS"))
    name, weighted = key.replace(" (weighted)", ""), key.endswith("(weighted)")
    fitted = ensemble.fit(frames["llm_arena"], features, name, seed=work.setting("seed", 0), weighted=weighted)
    target = frames["upheld"].dropna(subset=[*features, "target"])
    predicted = fitted.predict(target[features].to_numpy(dtype=float))
    return float(np.corrcoef(predicted, target["target"].to_numpy(dtype=float))[0, 1])


def _transfer_message(key: str) -> str:
    return (f"`reverse_transfer[{key!r}]` is not the Pearson r on UPHELD (content) of that ensemble trained on "
            "all of LLM-Arena with the chapter's metric columns (`METRICS`)")


def _transfer_form(work: Work) -> None:
    _given_transfer(work)


def _transfer_linear(work: Work) -> None:
    close(_given_transfer(work)["linear"], _transfer_expected(work, "linear"), tolerance=TRANSFER_TOLERANCE,
          message=_transfer_message("linear"))


def _transfer_all(work: Work) -> None:
    for key, value in _given_transfer(work).items():
        close(value, _transfer_expected(work, key), tolerance=TRANSFER_TOLERANCE, message=_transfer_message(key))


def _interval_frames(work: Work):
    everything = work.chapter("frames")["content"]["upheld"]
    judged = work.chapter("judged")["upheld"]
    sample = everything[everything["item_id"].isin(judged["item_id"])]
    return everything, sample


def _interval_form(work: Work) -> None:
    number(work["width_ratio"], "width_ratio", low=0, what="a ratio of two interval widths (positive)")
    number(work["size_ratio_sqrt"], "size_ratio_sqrt", low=0, what="the square root of a ratio of two sizes")


def _size_ratio(work: Work) -> None:
    everything, sample = _interval_frames(work)
    counted = [int(frame[["embedding_cosine", "target"]].dropna().shape[0]) for frame in (everything, sample)]
    expected = float(np.sqrt(counted[0] / counted[1]))
    given = number(work["size_ratio_sqrt"], "size_ratio_sqrt", low=0, what="the square root of a ratio")
    close(given, expected, tolerance=SIZE_TOLERANCE * expected,
          message="`size_ratio_sqrt` is not the square root of (scored UPHELD items / judged UPHELD items), "
                  "counting the items with both a cosine and a human score")


def _width_ratio(work: Work) -> None:
    from evalkit.stats import correlation_with_humans

    bootstrap, seed = int(work.setting("bootstrap", 1000)) or 1000, work.setting("seed", 0)
    widths = []
    for frame in _interval_frames(work):
        result = correlation_with_humans(frame["embedding_cosine"], frame["target"], bootstrap=bootstrap, seed=seed)
        widths.append(result.pearson_high - result.pearson_low)
    expected = widths[1] / widths[0]
    given = number(work["width_ratio"], "width_ratio", low=0, what="a ratio of two interval widths")
    close(given, expected, tolerance=WIDTH_TOLERANCE * expected,
          message="`width_ratio` is not (the judged sample's interval width) / (all scored items' interval "
                  "width) for embedding cosine against content")


EXERCISES = (
    Exercise("ch3-direction", CHAPTER, ("reverse_transfer",), public=(_transfer_form, _transfer_linear),
             hidden=(_transfer_all,),
             asks="reverse_transfer: {ensemble: r on UPHELD content} for each ensemble trained on LLM-Arena"),
    Exercise("ch3-interval", CHAPTER, ("width_ratio", "size_ratio_sqrt"), public=(_interval_form, _size_ratio),
             hidden=(_width_ratio,),
             asks="width_ratio: the judged sample's interval width over all items'; size_ratio_sqrt: "
                  "sqrt(n all / n judged)"),
)
