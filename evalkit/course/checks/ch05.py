"""Chapter 5's exercises: balanced proxy slots against coin flips, and what the human anchor moves.

``ch5-slots`` needs no data: the coin-flip share is compared with its binomial probability and the balanced
design is recomputed with :func:`evalkit.userproxy.realism.proxy_slots`. ``ch5-anchor`` recomputes the
lexical z-scores from the notebook's run store and mirror sets (``store``, ``unit_table``, ``loaded``,
``datasets``) with :func:`evalkit.userproxy.evaluate.lexical_z_scores`; the tests exercise it on a small
stand-in store with a whitespace tokenizer.
"""
from __future__ import annotations

import numpy as np

from evalkit.course.core import Exercise, Work, Wrong, close, keyed, number, pair

CHAPTER = "05_user_proxy_eval"
EPISODES, SEEDS, FAR = 8, 1000, 0.25
#: The coin-flip share over 1,000 seeds has a binomial sd of about 0.014 around its probability (0.289 for
#: 8 episodes); 0.06 is over four of them, so any random generator passes and a share of the wrong event
#: (more than 0.25 away, or the balanced design's) does not.
COIN_TOLERANCE = 0.06
ANCHORS = (20, 50, 200)
ANCHOR_DRAWS = 8  # anchor samples drawn (seeds seed .. seed + 7) to learn how far a z moves with the draw
MATTR_TOLERANCE = 1e-3


def _coin_probability() -> float:
    from scipy import stats

    counts = np.arange(EPISODES + 1)
    far = np.abs(counts / EPISODES - 0.5) >= FAR - 1e-12
    return float(stats.binom.pmf(counts[far], EPISODES, 0.5).sum())


def _slots_form(work: Work) -> None:
    number(work["coin_far_share"], "coin_far_share", low=0, high=1, what="a share of the 1,000 seeds")
    pair(work["balanced_range"], "balanced_range", what="the smallest and largest always-'A' PI", low=0, high=1)


def _coin_share(work: Work) -> None:
    close(float(work["coin_far_share"]), _coin_probability(), tolerance=COIN_TOLERANCE,
          message="`coin_far_share` is not the share of seeds on which 8 coin-flip slots put an always-'A' "
                  "judge's PI 0.25 or more away from 0.5")


def _balanced_range(work: Work) -> None:
    from evalkit.userproxy import realism

    values = [realism.proxy_slots(EPISODES, seed).count("A") / EPISODES for seed in range(SEEDS)]
    low, high = pair(work["balanced_range"], "balanced_range", what="the smallest and largest PI", low=0, high=1)
    if abs(low - min(values)) > 1e-9 or abs(high - max(values)) > 1e-9:
        raise Wrong("`balanced_range` is not the smallest and largest PI an always-'A' judge gets with the "
                    "balanced slots of `realism.proxy_slots` over 1,000 seeds")


def _anchor_inputs(work: Work):
    return work.memo("anchor inputs", lambda: _read_anchor_inputs(work))


def _read_anchor_inputs(work: Work):
    from evalkit.userproxy import lexical

    dataset = work.chapter("datasets")[0]
    units = work.chapter("unit_table")
    rollout = units.query("kind == 'rollout' and dataset == @dataset")["unit_id"].iloc[0]
    proxy = [episode["payload"]["turns"] for episode in work.chapter("store").episodes(rollout).values()]
    frame = work.chapter("loaded")[dataset][0]
    return frame, proxy, lexical.lm_tokenizer(), int(work.setting("min_tokens", 5))


def _z_scores(frame, proxy, tokenizer, min_tokens: int, anchors: int, seed: int):
    from evalkit.userproxy.data import stratified_episodes
    from evalkit.userproxy.evaluate import lexical_z_scores

    human = list(stratified_episodes(frame, anchors, seed=seed)["turns"])
    return lexical_z_scores(human, proxy, tokenizer, min_tokens=min_tokens)


def _given_z(work: Work) -> dict:
    given = keyed(work["anchor_z"], "anchor_z", ANCHORS, what="the mean MATTR z of the proxy episodes")
    return {n: number(value, f"anchor_z[{n}]", what="a z-score") for n, value in given.items()}


def _anchor_form(work: Work) -> None:
    _given_z(work)
    number(work["proxy_mattr"], "proxy_mattr", low=0, high=1, what="a MATTR value (between 0 and 1)")


def _proxy_mattr(work: Work) -> None:
    frame, proxy, tokenizer, min_tokens = _anchor_inputs(work)
    z = _z_scores(frame, proxy, tokenizer, min_tokens, ANCHORS[0], work.setting("seed", 0))
    close(float(work["proxy_mattr"]), float(z["mattr_proxy"].mean()), tolerance=MATTR_TOLERANCE,
          message="`proxy_mattr` is not the mean MATTR of the first dataset's proxy episodes (the proxy's own "
                  "value, before any anchor is used)")


def _anchor_values(work: Work) -> None:
    frame, proxy, tokenizer, min_tokens = _anchor_inputs(work)
    seed = int(work.setting("seed", 0))
    for anchors, value in _given_z(work).items():
        draws = [float(_z_scores(frame, proxy, tokenizer, min_tokens, anchors, seed + k)["mattr"].mean())
                 for k in range(ANCHOR_DRAWS)]
        margin = max(0.05, (max(draws) - min(draws)) / 2)
        if not min(draws) - margin <= value <= max(draws) + margin:
            raise Wrong(f"`anchor_z[{anchors}]` is not the mean MATTR z of the first dataset's proxy episodes "
                        f"against {anchors} real conversations drawn with `stratified_episodes`")


EXERCISES = (
    Exercise("ch5-slots", CHAPTER, ("coin_far_share", "balanced_range"), public=(_slots_form, _coin_share),
             hidden=(_balanced_range,),
             asks="coin_far_share: share of 1,000 seeds with the coin-flip PI 0.25 or more from 0.5; "
                  "balanced_range: (smallest, largest) PI with balanced slots"),
    Exercise("ch5-anchor", CHAPTER, ("anchor_z", "proxy_mattr"), public=(_anchor_form, _proxy_mattr),
             hidden=(_anchor_values,),
             asks="anchor_z: {20: mean MATTR z, 50: ..., 200: ...}; proxy_mattr: the proxy's own mean MATTR"),
)
