"""Chapter 1's exercises: the aggregate score's floor, and perfect agreement by source.

The expected values are recomputed from the labels the chapter loaded (``main``, ``data``) with the kit's own
functions, and the floor from the labels' scales (:data:`evalkit.upheld.release.LABELS`).
"""
from __future__ import annotations

from evalkit.course.core import Exercise, Work, Wrong, choice, close, keyed, number

CHAPTER = "01_dataset_building"
TOLERANCE = 1e-6  # shares and aggregates are exact ratios of counts: any way of counting gives the same


def _floor_expected() -> float:
    from evalkit.upheld.release import LABELS

    return min(min(spec.scale) / spec.maximum for spec in LABELS.values())


def _main_aggregate(work: Work):
    from evalkit.upheld.release import aggregate_scores

    return aggregate_scores(work.chapter("main").labels).set_index("model")["content"]


def _floor(work: Work) -> None:
    value = number(work["floor"], "floor", low=0, high=1, what="a share (the lowest aggregate possible)")
    close(value, _floor_expected(), tolerance=TOLERANCE,
          message="`floor` is not the lowest value the aggregate can take: it is what a source gets when every "
                  "one of its ratings is the lowest score of the scale")


def _floor_form(work: Work) -> None:
    sources = list(work.chapter("main").labels["model"].unique())
    choice(work["lowest_source"], "lowest_source", sources, what="a candidate source of the main set")
    choice(work["nearer_source"], "nearer_source", ("random", "gpt4_rephrase"),
           what="the main-set source nearer to Topical-Chat's GPT-4o on content")


def _lowest_source(work: Work) -> None:
    aggregate = _main_aggregate(work)
    given = choice(work["lowest_source"], "lowest_source", list(aggregate.index), what="a candidate source")
    if aggregate[given] > aggregate.min() + TOLERANCE:
        raise Wrong("`lowest_source` is not the source with the lowest content aggregate on the main set")


def _nearer_source(work: Work) -> None:
    from evalkit.upheld.release import aggregate_scores

    main = _main_aggregate(work)
    topical = float(aggregate_scores(work.chapter("data")["topical_chat"].labels)["content"].iloc[0])
    distance = {source: abs(topical - main[source]) for source in ("random", "gpt4_rephrase")}
    given = choice(work["nearer_source"], "nearer_source", distance, what="the nearer main-set source")
    if distance[given] > min(distance.values()) + TOLERANCE:
        raise Wrong("`nearer_source` is not the main-set source whose content aggregate is closer to the "
                    "Topical-Chat check set's GPT-4o aggregate")


def _perfect_expected(work: Work):
    items = work.chapter("main").items
    return (items["content_bin"] == "perfect").groupby(items["model"]).mean()


def _perfect_share(work: Work) -> None:
    expected = _perfect_expected(work)
    given = keyed(work["perfect_share"], "perfect_share", list(expected.index),
                  what="the share of items with perfect content agreement")
    for source, share in given.items():
        share = number(share, f"perfect_share[{source!r}]", low=0, high=1, what="a share")
        close(share, float(expected[source]), tolerance=TOLERANCE,
              message=f"`perfect_share[{source!r}]` is not the share of {source}'s items whose content ratings "
                      "all agree (content agreement level 'perfect', out of all of the source's items)")


def _most_perfect_form(work: Work) -> None:
    sources = list(work.chapter("main").items["model"].unique())
    choice(work["most_perfect"], "most_perfect", sources, what="a candidate source of the main set")


def _most_perfect(work: Work) -> None:
    expected = _perfect_expected(work)
    given = choice(work["most_perfect"], "most_perfect", list(expected.index), what="a candidate source")
    if expected[given] < expected.max() - TOLERANCE:
        raise Wrong("`most_perfect` is not the source whose items most often get perfect content agreement")


EXERCISES = (
    Exercise("ch1-floor", CHAPTER, ("floor", "lowest_source", "nearer_source"), public=(_floor, _floor_form),
             hidden=(_lowest_source, _nearer_source),
             asks="floor: the lowest aggregate possible; lowest_source: the main-set source nearest to it on "
                  "content; nearer_source: 'random' or 'gpt4_rephrase', whichever is nearer Topical-Chat's GPT-4o"),
    Exercise("ch1-bins", CHAPTER, ("perfect_share", "most_perfect"), public=(_perfect_share, _most_perfect_form),
             hidden=(_most_perfect,),
             asks="perfect_share: per source, the share of items with perfect content agreement; most_perfect: "
                  "the source where it is highest"),
)
